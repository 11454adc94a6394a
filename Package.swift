// swift-tools-version: 6.0
import PackageDescription

// Exit tests (`#expect(processExitsWith:)`) exist on macOS and Linux only, and on macOS from
// Swift 6.2: the tests that use them are compiled where `EXIT_TESTS` is defined.
#if compiler(>=6.2)
    let exitTests: [SwiftSetting] = [.define("EXIT_TESTS", .when(platforms: [.macOS, .linux]))]
#else
    let exitTests: [SwiftSetting] = []
#endif

let package = Package(
    name: "OperationBridge",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
        .visionOS(.v1),
    ],
    products: [
        .library(name: "OperationBridge", targets: ["OperationBridge"]),
        .executable(name: "OperationBridgeBenchmarks", targets: ["OperationBridgeBenchmarks"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "OperationBridge"),
        .testTarget(
            name: "OperationBridgeTests",
            dependencies: ["OperationBridge"],
            swiftSettings: exitTests
        ),
        .executableTarget(
            name: "UnfurlDemo",
            dependencies: ["OperationBridge"],
            path: "Examples/UnfurlDemo"
        ),
        .executableTarget(
            name: "BatchDownloads",
            dependencies: ["OperationBridge"],
            path: "Examples/BatchDownloads"
        ),
        .executableTarget(
            name: "MixedPipeline",
            dependencies: ["OperationBridge"],
            path: "Examples/MixedPipeline"
        ),
        .executableTarget(
            name: "FlakyService",
            dependencies: ["OperationBridge"],
            path: "Examples/FlakyService"
        ),
        .executableTarget(
            name: "LegacyQueueActor",
            dependencies: ["OperationBridge"],
            path: "Examples/LegacyQueueActor"
        ),
        .executableTarget(
            name: "MigrationBefore",
            path: "Examples/MigrationBefore"
        ),
        .executableTarget(
            name: "MigrationAfter",
            dependencies: ["OperationBridge"],
            path: "Examples/MigrationAfter"
        ),
        .executableTarget(
            name: "ClassicSwift5",
            dependencies: ["OperationBridge"],
            path: "Examples/ClassicSwift5",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "OperationBridgeBenchmarks",
            dependencies: ["OperationBridge"],
            path: "Benchmarks/OperationBridgeBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming features for the package's own code. `ClassicSwift5` stays as classic code is written.
for target in package.targets where target.name != "ClassicSwift5" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny")
    ])
    target.swiftSettings = settings
}
