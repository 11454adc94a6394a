// swift-tools-version: 6.0
// Client packages that depend on OperationBridge by path, as an app or library would.
//
// CI builds this package on its own (`swift build --package-path Tests/Clients`), without
// warnings as errors: the legacy target's calls of Foundation's blocking waits from async code
// are warnings in the Swift 5 language mode — and must stay warnings, not turn into errors,
// once the package is added. CI then runs `LegacySubclasses` and `TopLevelLoops`, which exit with 1
// on a failed check.
import PackageDescription

// A path dependency's identity is the name of its directory: the repository's clone, whatever
// it is called.
let repository = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "OperationBridge")
let operationBridge = Target.Dependency.product(name: "OperationBridge", package: repository)

let package = Package(
    name: "Clients",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
        .visionOS(.v1),
    ],
    dependencies: [
        .package(path: "../..")
    ],
    targets: [
        // Legacy code in the Swift 5 language mode: one file imports the package, one does not
        // (extension members of an imported module are visible in every file of the module).
        .target(
            name: "LegacySwift5",
            dependencies: [operationBridge],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Classic subclasses (Swift 5) that declare and call their own pause(), isPaused,
        // isTimedOut, progress, whenFinished(_:), addCondition(_:)…: the package's capabilities sit
        // behind `bridge`, so these compile and resolve to the subclass. CI runs it; exits 1 on a
        // failed check.
        .executableTarget(
            name: "LegacySubclasses",
            dependencies: [operationBridge],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Top-level code (main.swift), where Swift never destroys a loop's iterator: leaving a
        // results loop there cancels nothing until `cancel()` is called (documented, checked).
        .executableTarget(
            name: "TopLevelLoops",
            dependencies: [operationBridge]
        ),
    ]
)
