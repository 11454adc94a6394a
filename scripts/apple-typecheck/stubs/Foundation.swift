// Foundation stub for the Apple type-check (scripts/typecheck-apple.sh): what the package — the
// library, its tests, examples, benchmark and client packages — uses of Apple's Foundation, with
// the Swift signatures the SDK gives it: availability, `Sendable` (NS_SWIFT_SENDABLE classes are
// `@unchecked Sendable`, NS_SWIFT_SENDABLE blocks are `@Sendable` closures), async-
// unavailability (NS_SWIFT_UNAVAILABLE_FROM_ASYNC), platform unavailability. Compiled with
// library evolution like the SDK's module: an NS_ENUM is a non-frozen enum.
//
// Sources: the Foundation headers and the Foundation Swift interface of the iOS 17.4 SDK
// (Xcode 15.3), NSOperation.h of a later SDK (the same annotations), Apple's documentation.
// The package needs Xcode 16 or later (swift-tools-version 6.0); later SDKs may have added
// annotations. "unsure:" marks an annotation that could not be checked
// against an SDK, or that Xcode 16+ SDKs may have changed, with the choice made.
//
// A stub more permissive than the SDK hides errors; one stricter than it fails the gate for
// nothing. Add only what the package uses, with the SDK's annotations; say where one comes from
// when it is not the headers. Bodies are placeholders: the module is only type-checked against.
@_exported import Darwin
@_exported import Dispatch

public typealias TimeInterval = Double

// MARK: NSObject

public protocol NSObjectProtocol: AnyObject {
    func isEqual(_ object: Any?) -> Bool
    var hash: Int { get }
    var description: String { get }
}

/// The root class. Not Sendable.
open class NSObject: NSObjectProtocol, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public init() {}
    open func isEqual(_ object: Any?) -> Bool { fatalError() }
    open var hash: Int { fatalError() }
    open var description: String { fatalError() }
    open var debugDescription: String { fatalError() }
    public static func == (lhs: NSObject, rhs: NSObject) -> Bool { lhs.isEqual(rhs) }
    public func hash(into hasher: inout Hasher) {}

    // NSKeyValueObserving.h: change notifications are unavailable from async contexts.
    @_unavailableFromAsync(
        message: "Only notify of changes to a key in a synchronous context. Notifying changes across suspension points has undefined behavior."
    )
    open func willChangeValue(forKey key: String) {}
    @_unavailableFromAsync(
        message: "Only notify of changes to a key in a synchronous context. Notifying changes across suspension points has undefined behavior."
    )
    open func didChangeValue(forKey key: String) {}
    open class func automaticallyNotifiesObservers(forKey key: String) -> Bool { fatalError() }
    open class func keyPathsForValuesAffectingValue(forKey key: String) -> Set<String> { fatalError() }
}

// MARK: Locks (NSLock.h: every lock NS_SWIFT_SENDABLE; blocking calls unavailable from async)

public protocol NSLocking {
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    func lock()
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    func unlock()
}

@available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
extension NSLocking {
    /// The Swift overlay's scoped locking: not unavailable from async, body not `@Sendable`.
    @_disfavoredOverload
    public func withLock<R>(_ body: () throws -> R) rethrows -> R { try body() }
}

open class NSLock: NSObject, NSLocking, @unchecked Sendable {
    public override init() {}
    // The importer gives a class the attributes of the protocol methods it adopts.
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func lock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func unlock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func `try`() -> Bool { fatalError() }
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func lock(before limit: Date) -> Bool { fatalError() }
    open var name: String?
}

open class NSRecursiveLock: NSObject, NSLocking, @unchecked Sendable {
    public override init() {}
    // The importer gives a class the attributes of the protocol methods it adopts.
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func lock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func unlock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func `try`() -> Bool { fatalError() }
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func lock(before limit: Date) -> Bool { fatalError() }
    open var name: String?
}

open class NSCondition: NSObject, NSLocking, @unchecked Sendable {
    public override init() {}
    // The importer gives a class the attributes of the protocol methods it adopts.
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func lock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func unlock() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func wait() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func wait(until limit: Date) -> Bool { fatalError() }
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func signal() {}
    @_unavailableFromAsync(message: "Use async-safe scoped locking instead")
    open func broadcast() {}
    open var name: String?
}

// MARK: Operations (NSOperation.h)

/// NSQualityOfService: an NS_ENUM, so not frozen (a switch needs `@unknown default`).
public enum QualityOfService: Int, Sendable {
    case userInteractive = 0x21
    case userInitiated = 0x19
    case utility = 0x11
    case background = 0x09
    case `default` = -1
}

@available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
open class Operation: NSObject, @unchecked Sendable {
    /// NSOperationQueuePriority: an NS_ENUM.
    public enum QueuePriority: Int, Sendable {
        case veryLow = -8
        case low = -4
        case normal = 0
        case high = 4
        case veryHigh = 8
    }

    public override init() {}
    open func start() {}
    open func main() {}
    open var isCancelled: Bool { fatalError() }
    open func cancel() {}
    open var isExecuting: Bool { fatalError() }
    open var isFinished: Bool { fatalError() }
    open var isConcurrent: Bool { fatalError() }
    @available(macOS 10.8, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    open var isAsynchronous: Bool { fatalError() }
    open var isReady: Bool { fatalError() }
    open func addDependency(_ op: Operation) {}
    open func removeDependency(_ op: Operation) {}
    open var dependencies: [Operation] { fatalError() }
    open var queuePriority: Operation.QueuePriority {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open var completionBlock: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    @_unavailableFromAsync(message: "Use completionBlock or a dependent Operation instead")
    open func waitUntilFinished() {}
    @available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
    open var qualityOfService: QualityOfService {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
    open var name: String? {
        get { fatalError() }
        set {}
    }
}

@available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
open class BlockOperation: Operation, @unchecked Sendable {
    public override init() {}
    public convenience init(block: @escaping @Sendable () -> Void) { self.init() }
    open func addExecutionBlock(_ block: @escaping @Sendable () -> Void) {}
    open var executionBlocks: [@Sendable () -> Void] { fatalError() }
}

public protocol ProgressReporting: NSObjectProtocol {
    var progress: Progress { get }
}

@available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
open class OperationQueue: NSObject, ProgressReporting, @unchecked Sendable {
    public class var defaultMaxConcurrentOperationCount: Int { -1 }

    public override init() {}
    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    open var progress: Progress { fatalError() }
    open func addOperation(_ op: Operation) {}
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    @_unavailableFromAsync(message: "Use addBarrierBlock or a dependent Operations instead")
    open func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {}
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open func addOperation(_ block: @escaping @Sendable () -> Void) {}
    @available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
    open func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {}
    open var maxConcurrentOperationCount: Int {
        get { fatalError() }
        set {}
    }
    open var isSuspended: Bool {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open var name: String? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
    open var qualityOfService: QualityOfService {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
    unowned(unsafe) open var underlyingQueue: DispatchQueue? {
        get { fatalError() }
        set {}
    }
    open func cancelAllOperations() {}
    @_unavailableFromAsync(message: "Use addBarrierBlock or a dependent Operations instead")
    open func waitUntilAllOperationsAreFinished() {}
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open class var current: OperationQueue? { fatalError() }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open class var main: OperationQueue { fatalError() }

    // NSOperationQueue (NSDeprecated): deprecated in a future version (API_TO_BE_DEPRECATED).
    @available(
        macOS, introduced: 10.5, deprecated: 100000,
        message:
            "access to operations is inherently a race condition, it should not be used. For barrier style behaviors please use addBarrierBlock: instead"
    )
    @available(
        iOS, introduced: 2.0, deprecated: 100000,
        message:
            "access to operations is inherently a race condition, it should not be used. For barrier style behaviors please use addBarrierBlock: instead"
    )
    @available(
        watchOS, introduced: 2.0, deprecated: 100000,
        message:
            "access to operations is inherently a race condition, it should not be used. For barrier style behaviors please use addBarrierBlock: instead"
    )
    @available(
        tvOS, introduced: 9.0, deprecated: 100000,
        message:
            "access to operations is inherently a race condition, it should not be used. For barrier style behaviors please use addBarrierBlock: instead"
    )
    open var operations: [Operation] { fatalError() }
    @available(macOS, introduced: 10.6, deprecated: 100000, renamed: "progress.completedUnitCount")
    @available(iOS, introduced: 4.0, deprecated: 100000, renamed: "progress.completedUnitCount")
    @available(watchOS, introduced: 2.0, deprecated: 100000, renamed: "progress.completedUnitCount")
    @available(tvOS, introduced: 9.0, deprecated: 100000, renamed: "progress.completedUnitCount")
    open var operationCount: Int { fatalError() }
}

// MARK: Progress (NSProgress.h: NS_SWIFT_SENDABLE; the current-progress calls unavailable from async)

public struct ProgressKind: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    @available(macOS 10.9, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    public static let file = ProgressKind("NSProgressKindFile")
}

public struct ProgressUserInfoKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    @available(macOS 10.9, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    public static let estimatedTimeRemainingKey = ProgressUserInfoKey("NSProgressEstimatedTimeRemainingKey")
    @available(macOS 10.9, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    public static let throughputKey = ProgressUserInfoKey("NSProgressThroughputKey")
    @available(macOS 10.9, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    public static let fileTotalCountKey = ProgressUserInfoKey("NSProgressFileTotalCountKey")
    @available(macOS 10.9, iOS 7.0, watchOS 2.0, tvOS 9.0, *)
    public static let fileCompletedCountKey = ProgressUserInfoKey("NSProgressFileCompletedCountKey")
}

open class Progress: NSObject, @unchecked Sendable {
    @_unavailableFromAsync(message: "Progress for the current thread cannot be used in async contexts.")
    open class func current() -> Progress? { fatalError() }

    public init(parent parentProgressOrNil: Progress?, userInfo userInfoOrNil: [ProgressUserInfoKey: Any]? = nil) {}
    /// `+progressWithTotalUnitCount:` (attaches to the current progress of the calling thread).
    public convenience init(totalUnitCount unitCount: Int64) { self.init(parent: nil) }
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    public convenience init(totalUnitCount unitCount: Int64, parent: Progress, pendingUnitCount portionOfParentTotalUnitCount: Int64) {
        self.init(parent: nil)
    }
    public convenience override init() { self.init(parent: nil) }
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    open class func discreteProgress(totalUnitCount unitCount: Int64) -> Progress { fatalError() }

    @_unavailableFromAsync(message: "Progress for the current thread cannot be used in async contexts.")
    open func becomeCurrent(withPendingUnitCount unitCount: Int64) {}
    @_unavailableFromAsync(message: "Progress for the current thread cannot be used in async contexts.")
    open func resignCurrent() {}
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    open func addChild(_ child: Progress, withPendingUnitCount inUnitCount: Int64) {}

    open var totalUnitCount: Int64 {
        get { fatalError() }
        set {}
    }
    open var completedUnitCount: Int64 {
        get { fatalError() }
        set {}
    }
    open var localizedDescription: String! {
        get { fatalError() }
        set {}
    }
    open var localizedAdditionalDescription: String! {
        get { fatalError() }
        set {}
    }
    open var isCancellable: Bool {
        get { fatalError() }
        set {}
    }
    open var isPausable: Bool {
        get { fatalError() }
        set {}
    }
    open var isCancelled: Bool { fatalError() }
    open var isPaused: Bool { fatalError() }
    open var cancellationHandler: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    open var pausingHandler: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    open var resumingHandler: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    open func setUserInfoObject(_ objectOrNil: Any?, forKey key: ProgressUserInfoKey) {}
    open var isIndeterminate: Bool { fatalError() }
    open var fractionCompleted: Double { fatalError() }
    open var isFinished: Bool { fatalError() }
    open func cancel() {}
    open func pause() {}
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    open func resume() {}
    open var userInfo: [ProgressUserInfoKey: Any] { fatalError() }
    open var kind: ProgressKind? {
        get { fatalError() }
        set {}
    }
}

extension Progress {
    // The Swift overlay's refinements of the NS_REFINED_FOR_SWIFT members.
    @available(macOS 10.13, iOS 11.0, watchOS 4.0, tvOS 11.0, *)
    public var estimatedTimeRemaining: TimeInterval? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.13, iOS 11.0, watchOS 4.0, tvOS 11.0, *)
    public var throughput: Int? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.13, iOS 11.0, watchOS 4.0, tvOS 11.0, *)
    public var fileTotalCount: Int? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.13, iOS 11.0, watchOS 4.0, tvOS 11.0, *)
    public var fileCompletedCount: Int? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.11, iOS 9.0, watchOS 2.0, tvOS 9.0, *)
    public func performAsCurrent<ReturnType>(
        withPendingUnitCount unitCount: Int64, using work: () throws -> ReturnType
    ) rethrows -> ReturnType { try work() }
}

// MARK: Threads and the process

/// NSThread.h: not NS_SWIFT_SENDABLE in the iOS 17.4 SDK (unsure whether later SDKs mark it).
open class Thread: NSObject {
    // A property: `noasync` availability is how the importer marks it.
    @available(*, noasync, message: "Thread.current cannot be used from async contexts.")
    open class var current: Thread { fatalError() }
    @available(macOS 10.12, iOS 10.0, watchOS 3.0, tvOS 10.0, *)
    open class func detachNewThread(_ block: @escaping @Sendable () -> Void) {}
    @_unavailableFromAsync(message: "Use Task.sleep(until:clock:) instead.")
    open class func sleep(until date: Date) {}
    @_unavailableFromAsync(message: "Use Task.sleep(until:clock:) instead.")
    open class func sleep(forTimeInterval ti: TimeInterval) {}
    @_unavailableFromAsync(message: "Threads used in asynchronous contexts cannot be explicitly exited.")
    open class func exit() {}
    @available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
    open var qualityOfService: QualityOfService {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open class var callStackSymbols: [String] { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var name: String? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var stackSize: Int {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var isMainThread: Bool { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    @available(*, noasync, message: "Work intended for the main actor should be marked with @MainActor")
    open class var isMainThread: Bool { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open class var main: Thread { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    public override init() {}
    @available(macOS 10.12, iOS 10.0, watchOS 3.0, tvOS 10.0, *)
    public convenience init(block: @escaping @Sendable () -> Void) { self.init() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var isExecuting: Bool { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var isFinished: Bool { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var isCancelled: Bool { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open func cancel() {}
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open func start() {}
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open func main() {}
}

/// NSProcessInfo.h: not NS_SWIFT_SENDABLE in the iOS 17.4 SDK (unsure: later SDKs, whose
/// ProcessInfo is written in Swift, may declare it Sendable).
open class ProcessInfo: NSObject {
    open class var processInfo: ProcessInfo { fatalError() }
    open var environment: [String: String] { fatalError() }
    open var arguments: [String] { fatalError() }
    open var processIdentifier: Int32 { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var processorCount: Int { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var activeProcessorCount: Int { fatalError() }
    @available(macOS 10.5, iOS 2.0, watchOS 2.0, tvOS 9.0, *)
    open var physicalMemory: UInt64 { fatalError() }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open var systemUptime: TimeInterval { fatalError() }
}

/// NSFileHandle.h: NS_SWIFT_SENDABLE.
open class FileHandle: NSObject, @unchecked Sendable {
    open class var standardInput: FileHandle { fatalError() }
    open class var standardOutput: FileHandle { fatalError() }
    open class var standardError: FileHandle { fatalError() }
    open var fileDescriptor: Int32 { fatalError() }
    open var availableData: Data { fatalError() }
    public init(fileDescriptor fd: Int32) {}
    public init(fileDescriptor fd: Int32, closeOnDealloc closeopt: Bool) {}
    @available(macOS, deprecated: 100000, message: "Use readToEnd() instead")
    @available(iOS, deprecated: 100000, message: "Use readToEnd() instead")
    @available(watchOS, deprecated: 100000, message: "Use readToEnd() instead")
    @available(tvOS, deprecated: 100000, message: "Use readToEnd() instead")
    open func readDataToEndOfFile() -> Data { fatalError() }
    @available(macOS, deprecated: 100000, message: "Use write(contentsOf:) instead")
    @available(iOS, deprecated: 100000, message: "Use write(contentsOf:) instead")
    @available(watchOS, deprecated: 100000, message: "Use write(contentsOf:) instead")
    @available(tvOS, deprecated: 100000, message: "Use write(contentsOf:) instead")
    open func write(_ data: Data) {}
    @available(macOS, deprecated: 100000, message: "Use close() instead")
    @available(iOS, deprecated: 100000, message: "Use close() instead")
    @available(watchOS, deprecated: 100000, message: "Use close() instead")
    @available(tvOS, deprecated: 100000, message: "Use close() instead")
    open func closeFile() {}
}

extension FileHandle {
    @available(macOS 10.15.4, iOS 13.4, watchOS 6.2, tvOS 13.4, *)
    public func readToEnd() throws -> Data? { fatalError() }
    @available(macOS 10.15.4, iOS 13.4, watchOS 6.2, tvOS 13.4, *)
    public func write<T: DataProtocol>(contentsOf data: T) throws {}
    @available(macOS 10.15, iOS 13.0, watchOS 6.0, tvOS 13.0, *)
    public func close() throws {}
}

/// NSPipe: NS_SWIFT_SENDABLE.
open class Pipe: NSObject, @unchecked Sendable {
    public override init() {}
    open var fileHandleForReading: FileHandle { fatalError() }
    open var fileHandleForWriting: FileHandle { fatalError() }
}

/// NSTask: macOS only — NSTask.h is not in the other platforms' SDKs, so using `Process` outside
/// `#if os(macOS)` fails there; here it is declared unavailable on them, which fails the same way.
/// unsure: its Sendable conformance (swift-corelibs-foundation declares `@unchecked Sendable`,
/// the NSTask.h seen has no sendability audit); kept, the package only uses a `Process` where it
/// is made.
@available(macOS 10.0, *)
@available(iOS, unavailable)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
open class Process: NSObject, @unchecked Sendable {
    public override init() {}
    @available(macOS 10.13, *)
    open var executableURL: URL? {
        get { fatalError() }
        set {}
    }
    open var arguments: [String]? {
        get { fatalError() }
        set {}
    }
    open var environment: [String: String]? {
        get { fatalError() }
        set {}
    }
    open var standardInput: Any? {
        get { fatalError() }
        set {}
    }
    open var standardOutput: Any? {
        get { fatalError() }
        set {}
    }
    open var standardError: Any? {
        get { fatalError() }
        set {}
    }
    @available(macOS 10.13, *)
    open func run() throws {}
    open func terminate() {}
    open var processIdentifier: Int32 { fatalError() }
    open var isRunning: Bool { fatalError() }
    open var terminationStatus: Int32 { fatalError() }
    // NSTask.h: not unavailable from async (in the headers seen; unsure for Xcode 16+ SDKs).
    open func waitUntilExit() {}
}

/// NSBundle.h: NS_SWIFT_SENDABLE.
open class Bundle: NSObject, @unchecked Sendable {
    open class var main: Bundle { fatalError() }
    @available(macOS 10.6, iOS 4.0, watchOS 2.0, tvOS 9.0, *)
    open var executableURL: URL? { fatalError() }
    open var bundlePath: String { fatalError() }
}

// MARK: Value types (the Swift overlay; all Sendable there)

public struct Date: Comparable, Hashable, Sendable {
    public init() {}
    public init(timeIntervalSinceNow: TimeInterval) {}
    public init(timeIntervalSince1970: TimeInterval) {}
    public init(timeIntervalSinceReferenceDate ti: TimeInterval) {}
    public static var distantFuture: Date { fatalError() }
    public static var distantPast: Date { fatalError() }
    @available(macOS 12, iOS 15, tvOS 15, watchOS 8, *)
    public static var now: Date { fatalError() }
    public var timeIntervalSinceNow: TimeInterval { fatalError() }
    public var timeIntervalSince1970: TimeInterval { fatalError() }
    public var timeIntervalSinceReferenceDate: TimeInterval { fatalError() }
    public func timeIntervalSince(_ date: Date) -> TimeInterval { fatalError() }
    public func addingTimeInterval(_ timeInterval: TimeInterval) -> Date { fatalError() }
    public static func < (lhs: Date, rhs: Date) -> Bool { fatalError() }
    public static func + (lhs: Date, rhs: TimeInterval) -> Date { fatalError() }
    public static func - (lhs: Date, rhs: TimeInterval) -> Date { fatalError() }
}

public protocol DataProtocol: RandomAccessCollection where Element == UInt8 {}

@frozen public struct Data: Hashable, Sendable, RandomAccessCollection, MutableCollection, RangeReplaceableCollection,
    DataProtocol, CustomStringConvertible
{
    @usableFromInline var storage: [UInt8]
    public init() { storage = [] }
    public init<S: Sequence>(_ elements: S) where S.Element == UInt8 { storage = Array(elements) }
    public init(count: Int) { storage = [] }
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }
    public subscript(position: Int) -> UInt8 {
        get { storage[position] }
        set { storage[position] = newValue }
    }
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == UInt8 {}
    public var count: Int { storage.count }
    public var description: String { fatalError() }
}

public struct UUID: Hashable, Sendable, CustomStringConvertible {
    public init() {}
    public init?(uuidString string: String) { return nil }
    public var uuidString: String { fatalError() }
    public var description: String { fatalError() }
}

public struct URL: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public init?(string: String) { return nil }
    public init(fileURLWithPath path: String) {}
    public var absoluteString: String { fatalError() }
    public var scheme: String? { fatalError() }
    public var host: String? { fatalError() }
    public var path: String { fatalError() }
    public var query: String? { fatalError() }
    public var lastPathComponent: String { fatalError() }
    public func appendingPathComponent(_ pathComponent: String) -> URL { fatalError() }
    public func appendingPathExtension(_ pathExtension: String) -> URL { fatalError() }
    public func deletingLastPathComponent() -> URL { fatalError() }
    public func deletingPathExtension() -> URL { fatalError() }
    public var description: String { fatalError() }
    public var debugDescription: String { fatalError() }
}

public struct URLQueryItem: Hashable, Sendable {
    public init(name: String, value: String?) {}
    public var name: String { fatalError() }
    public var value: String? { fatalError() }
}

public struct URLComponents: Hashable, Sendable {
    public init() {}
    public init?(url: URL, resolvingAgainstBaseURL resolve: Bool) { return nil }
    public init?(string: String) { return nil }
    public var url: URL? { fatalError() }
    public var scheme: String? {
        get { fatalError() }
        set {}
    }
    public var host: String? {
        get { fatalError() }
        set {}
    }
    public var path: String {
        get { fatalError() }
        set {}
    }
    public var queryItems: [URLQueryItem]? {
        get { fatalError() }
        set {}
    }
}

/// A bridged NSError (`_BridgedStoredNSError`): an `Error` (so Sendable), `Hashable`.
public struct URLError: Error, Hashable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
    }
    public init(_ code: Code, userInfo: [String: Any] = [:]) {}
    public var code: Code { fatalError() }
    public static func == (lhs: URLError, rhs: URLError) -> Bool { fatalError() }
    public func hash(into hasher: inout Hasher) {}
}

@available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
extension URLError.Code {
    public static var unknown: URLError.Code { fatalError() }
    public static var cancelled: URLError.Code { fatalError() }
    public static var badURL: URLError.Code { fatalError() }
    public static var timedOut: URLError.Code { fatalError() }
    public static var notConnectedToInternet: URLError.Code { fatalError() }
}

public struct CharacterSet: Hashable, Sendable {
    public static var whitespaces: CharacterSet { fatalError() }
    public static var whitespacesAndNewlines: CharacterSet { fatalError() }
    public static var newlines: CharacterSet { fatalError() }
}

// MARK: Coding (JSONEncoder/JSONDecoder: `@unchecked Sendable` in the Swift overlay)

open class JSONEncoder: @unchecked Sendable {
    public struct OutputFormatting: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let prettyPrinted = OutputFormatting(rawValue: 1 << 0)
        @available(macOS 10.13, iOS 11.0, watchOS 4.0, tvOS 11.0, *)
        public static let sortedKeys = OutputFormatting(rawValue: 1 << 1)
        @available(macOS 10.15, iOS 13.0, watchOS 6.0, tvOS 13.0, *)
        public static let withoutEscapingSlashes = OutputFormatting(rawValue: 1 << 3)
    }
    open var outputFormatting: OutputFormatting {
        get { fatalError() }
        set {}
    }
    public init() {}
    open func encode<T: Encodable>(_ value: T) throws -> Data { fatalError() }
}

open class JSONDecoder: @unchecked Sendable {
    public init() {}
    open func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { fatalError() }
}

// MARK: Strings (the Swift overlay's NSString bridging)

extension String {
    public struct Encoding: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let utf8 = Encoding(rawValue: 4)
        public static let ascii = Encoding(rawValue: 1)
    }

    public init(format: String, _ arguments: any CVarArg...) { self = format }
    public init(format: String, arguments: [any CVarArg]) { self = format }
    public init?(data: Data, encoding: Encoding) { return nil }
    public init(contentsOfFile path: String, encoding enc: Encoding) throws { self = path }
    public init(contentsOf url: URL, encoding enc: Encoding) throws { self = "" }
}

/// For `%@` in format strings.
@available(macOS 10.10, iOS 8.0, watchOS 2.0, tvOS 9.0, *)
extension String: CVarArg {
    public var _cVarArgEncoding: [Int] { fatalError() }
}

extension StringProtocol {
    public func write(to url: URL, atomically useAuxiliaryFile: Bool, encoding enc: String.Encoding) throws {}
    public func data(using encoding: String.Encoding, allowLossyConversion: Bool = false) -> Data? { nil }
    public func trimmingCharacters(in set: CharacterSet) -> String { fatalError() }
    public func components<T: StringProtocol>(separatedBy separator: T) -> [String] { fatalError() }
    public func components(separatedBy separator: CharacterSet) -> [String] { fatalError() }
    public func padding<T: StringProtocol>(toLength newLength: Int, withPad padString: T, startingAt padIndex: Int)
        -> String
    { fatalError() }
    public func replacingOccurrences<Target: StringProtocol, Replacement: StringProtocol>(
        of target: Target, with replacement: Replacement
    ) -> String { fatalError() }
}
