// Dispatch stub for the Apple type-check (scripts/typecheck-apple.sh): what the package uses of
// Apple's Dispatch, with the SDK's Swift signatures, availability, Sendable conformances and
// async-unavailability. Compiled with library evolution, like the SDK's module: an enum that is
// not `@frozen` here needs `@unknown default` in a switch, as on Apple platforms.
//
// Sources: Apple's Swift overlay source for dispatch/queue.h from the Xcode 26 era (it declares
// APIs "introduced" in macOS 16 / iOS 19), for everything `DispatchQueue` declares there; the
// Swift interface of Dispatch in the iOS 17.4 SDK (Xcode 15.3) for the rest, and the C headers
// it refines (dispatch/object.h declares every dispatch object `Sendable`; the `DispatchObject`
// base class is not). The package needs Xcode 16 or later (swift-tools-version 6.0), so the
// newer source wins where they differ. Where they and Linux's swift-corelibs-libdispatch
// differ, this file follows Apple's. "unsure" marks what Xcode 16+ SDKs may have changed from
// the 17.4 SDK.
// Bodies are placeholders: the module is only type-checked against.
@_exported import Darwin

// MARK: Time

public struct DispatchTime: Comparable, Sendable {
    public let rawValue: UInt64
    public static func now() -> DispatchTime { fatalError() }
    public static let distantFuture = DispatchTime(uptimeNanoseconds: .max)
    public init(uptimeNanoseconds: UInt64) { rawValue = uptimeNanoseconds }
    public var uptimeNanoseconds: UInt64 { rawValue }
    public static func < (a: DispatchTime, b: DispatchTime) -> Bool { a.rawValue < b.rawValue }
}

public struct DispatchWallTime: Comparable, Sendable {
    public let rawValue: UInt64
    public static func now() -> DispatchWallTime { fatalError() }
    public static let distantFuture = DispatchWallTime(rawValue: .max)
    init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: DispatchWallTime, b: DispatchWallTime) -> Bool { a.rawValue < b.rawValue }
}

// Not @frozen in the SDK.
public enum DispatchTimeInterval: Equatable, Sendable {
    case seconds(Int)
    case milliseconds(Int)
    case microseconds(Int)
    case nanoseconds(Int)
    case never
}

public func + (time: DispatchTime, interval: DispatchTimeInterval) -> DispatchTime { fatalError() }
public func - (time: DispatchTime, interval: DispatchTimeInterval) -> DispatchTime { fatalError() }
public func + (time: DispatchTime, seconds: Double) -> DispatchTime { fatalError() }
public func - (time: DispatchTime, seconds: Double) -> DispatchTime { fatalError() }
public func + (time: DispatchWallTime, interval: DispatchTimeInterval) -> DispatchWallTime { fatalError() }
public func - (time: DispatchWallTime, interval: DispatchTimeInterval) -> DispatchWallTime { fatalError() }
public func + (time: DispatchWallTime, seconds: Double) -> DispatchWallTime { fatalError() }
public func - (time: DispatchWallTime, seconds: Double) -> DispatchWallTime { fatalError() }

@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension DispatchTime {
    public func distance(to other: DispatchTime) -> DispatchTimeInterval { fatalError() }
    public func advanced(by n: DispatchTimeInterval) -> DispatchTime { fatalError() }
}

// @frozen in the SDK; its Sendable conformance is a separate extension there.
@frozen public enum DispatchTimeoutResult {
    case success
    case timedOut
}
extension DispatchTimeoutResult: Sendable {}

// MARK: Quality of service

// Not Sendable in the iOS 17.4 SDK (Linux's libdispatch declares it Sendable). unsure: Xcode 16+
// SDKs may add the conformance (the newer overlay made DispatchQueue's nested types Sendable);
// the stricter declaration is kept.
public struct DispatchQoS: Equatable {
    public let qosClass: QoSClass
    public let relativePriority: Int
    public static let background = DispatchQoS(qosClass: .background, relativePriority: 0)
    public static let utility = DispatchQoS(qosClass: .utility, relativePriority: 0)
    public static let `default` = DispatchQoS(qosClass: .default, relativePriority: 0)
    public static let userInitiated = DispatchQoS(qosClass: .userInitiated, relativePriority: 0)
    public static let userInteractive = DispatchQoS(qosClass: .userInteractive, relativePriority: 0)
    public static let unspecified = DispatchQoS(qosClass: .unspecified, relativePriority: 0)

    // Not @frozen, not Sendable in the iOS 17.4 SDK (unsure for later SDKs, as above).
    public enum QoSClass {
        case background
        case utility
        case `default`
        case userInitiated
        case userInteractive
        case unspecified
    }

    public init(qosClass: QoSClass, relativePriority: Int) {
        self.qosClass = qosClass
        self.relativePriority = relativePriority
    }
}

// Not Sendable in the iOS 17.4 SDK (unsure for later SDKs).
public struct DispatchWorkItemFlags: OptionSet {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let barrier = DispatchWorkItemFlags(rawValue: 0x1)
    public static let detached = DispatchWorkItemFlags(rawValue: 0x2)
    public static let assignCurrentContext = DispatchWorkItemFlags(rawValue: 0x4)
    public static let noQoS = DispatchWorkItemFlags(rawValue: 0x8)
    public static let inheritQoS = DispatchWorkItemFlags(rawValue: 0x10)
    public static let enforceQoS = DispatchWorkItemFlags(rawValue: 0x20)
}

// MARK: Objects

/// The base class (object.h: `OS_OBJECT_DECL_CLASS(dispatch_object)`, not Sendable).
open class DispatchObject {
    init() {}
    @available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
    public func activate() {}
    public func suspend() {}
    public func resume() {}
    public func setTarget(queue: DispatchQueue?) {}
}

// Not Sendable in the SDK (a Swift class of the overlay).
@available(macOS 10.10, iOS 8.0, *)
public class DispatchWorkItem {
    public init(
        qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], block: @escaping @convention(block) () -> Void
    ) {}
    public func perform() {}
    public func wait() {}
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult { fatalError() }
    public func wait(wallTimeout: DispatchWallTime) -> DispatchTimeoutResult { fatalError() }
    public func notify(
        qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], queue: DispatchQueue,
        execute: @escaping @convention(block) () -> Void
    ) {}
    public func notify(queue: DispatchQueue, execute: DispatchWorkItem) {}
    public func cancel() {}
    public var isCancelled: Bool { fatalError() }
}

public final class DispatchSpecificKey<T> {
    public init() {}
}
// Newer overlay; the iOS 17.4 SDK has no Sendable conformance.
extension DispatchSpecificKey: Sendable where T: Sendable {}

public class DispatchQueue: DispatchObject, @unchecked Sendable {
    // Sendable in the newer overlay (not in the iOS 17.4 SDK).
    public struct Attributes: OptionSet, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        public static let concurrent = Attributes(rawValue: 1 << 1)
        @available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
        public static let initiallyInactive = Attributes(rawValue: 1 << 2)
    }

    public enum AutoreleaseFrequency: Sendable {
        case inherit
        @available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
        case workItem
        @available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
        case never
    }

    public convenience init(
        label: String, qos: DispatchQoS = .unspecified, attributes: Attributes = [],
        autoreleaseFrequency: AutoreleaseFrequency = .inherit, target: DispatchQueue? = nil
    ) { fatalError() }

    public class var main: DispatchQueue { fatalError() }
    public class func global(qos: DispatchQoS.QoSClass = .default) -> DispatchQueue { fatalError() }
    // The newer overlay requires a @Sendable body (the iOS 17.4 SDK does not).
    @preconcurrency
    public class func concurrentPerform(iterations: Int, execute work: @Sendable (Int) -> Void) {}
    @preconcurrency
    public class func getSpecific<T: Sendable>(key: DispatchSpecificKey<T>) -> T? { nil }

    public var label: String { fatalError() }
    @available(macOS 10.10, iOS 8.0, *)
    public var qos: DispatchQoS { fatalError() }

    public func sync(execute workItem: DispatchWorkItem) {}
    public func async(execute workItem: DispatchWorkItem) {}
    public func async(group: DispatchGroup, execute workItem: DispatchWorkItem) {}
    @preconcurrency
    public func async(
        group: DispatchGroup? = nil, qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
        execute work: @escaping @Sendable @convention(block) () -> Void
    ) {}
    public func sync<T>(execute work: () throws -> T) rethrows -> T { try work() }
    public func sync<T>(flags: DispatchWorkItemFlags, execute work: () throws -> T) rethrows -> T { try work() }
    @available(macOS 10.14, iOS 12.0, tvOS 12.0, watchOS 5.0, *)
    public func asyncAndWait<T>(execute work: () throws -> T) rethrows -> T { try work() }
    @preconcurrency
    public func asyncAfter(
        deadline: DispatchTime, qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
        execute work: @escaping @Sendable @convention(block) () -> Void
    ) {}
    @preconcurrency
    public func asyncAfter(
        wallDeadline: DispatchWallTime, qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
        execute work: @escaping @Sendable @convention(block) () -> Void
    ) {}
    @available(macOS 10.10, iOS 8.0, *)
    public func asyncAfter(deadline: DispatchTime, execute: DispatchWorkItem) {}
    @available(macOS 10.10, iOS 8.0, *)
    public func asyncAfter(wallDeadline: DispatchWallTime, execute: DispatchWorkItem) {}
    @preconcurrency
    public func getSpecific<T: Sendable>(key: DispatchSpecificKey<T>) -> T? { nil }
    @preconcurrency
    public func setSpecific<T: Sendable>(key: DispatchSpecificKey<T>, value: T?) {}
}

// Not declared: `DispatchQueue: TaskExecutor` (macOS 15.4, iOS 18.4, tvOS 18.4, watchOS 11.4).
// Here it would clash with `DispatchSerialQueue: SerialExecutor` (both imply `Executor`, at
// different versions), which the SDK declares on a private superclass; the package uses neither.

/// Apple's documentation: macOS 14, iOS 17, tvOS 17, watchOS 10 (visionOS 1), like its Swift
/// initializer and `SerialExecutor` conformance. unsure: queue.h declares the C type
/// `dispatch_queue_serial_t` from macOS 10.14 / iOS 12; the documented (stricter) floor is kept.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
public class DispatchSerialQueue: DispatchQueue, @unchecked Sendable {}

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension DispatchSerialQueue {
    public struct Attributes: OptionSet, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        public static let initiallyInactive = Attributes(rawValue: 1 << 2)
    }
    public convenience init(
        label: String, qos: DispatchQoS = .unspecified, attributes: DispatchSerialQueue.Attributes = [],
        autoreleaseFrequency: AutoreleaseFrequency = .workItem, target: DispatchQueue? = nil
    ) { fatalError() }
}

@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
extension DispatchSerialQueue: SerialExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {}
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { fatalError() }
}

public class DispatchGroup: DispatchObject, @unchecked Sendable {
    public override init() {}
    public func enter() {}
    public func leave() {}
    // The work is not @Sendable in the iOS 17.4 SDK (unsure for later SDKs).
    public func notify(
        qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], queue: DispatchQueue,
        execute work: @escaping @convention(block) () -> Void
    ) {}
    @available(macOS 10.10, iOS 8.0, *)
    public func notify(queue: DispatchQueue, work: DispatchWorkItem) {}
    @_unavailableFromAsync(message: "Use a TaskGroup instead")
    public func wait() {}
    @_unavailableFromAsync(message: "Use a TaskGroup instead")
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult { fatalError() }
    @_unavailableFromAsync(message: "Use a TaskGroup instead")
    public func wait(wallTimeout timeout: DispatchWallTime) -> DispatchTimeoutResult { fatalError() }
}

public class DispatchSemaphore: DispatchObject, @unchecked Sendable {
    public init(value: Int) {}
    @discardableResult
    public func signal() -> Int { fatalError() }
    @_unavailableFromAsync(message: "Await a Task handle instead")
    public func wait() {}
    @_unavailableFromAsync(message: "Await a Task handle instead")
    public func wait(timeout: DispatchTime) -> DispatchTimeoutResult { fatalError() }
    @_unavailableFromAsync(message: "Await a Task handle instead")
    public func wait(wallTimeout: DispatchWallTime) -> DispatchTimeoutResult { fatalError() }
}

// MARK: Sources (timers)

/// Imported from the C headers as a class-bound protocol; not Sendable.
public protocol DispatchSourceProtocol: AnyObject {
    typealias DispatchSourceHandler = @convention(block) () -> Void
    func cancel()
    func resume()
    func suspend()
    var isCancelled: Bool { get }
}

extension DispatchSourceProtocol {
    public func setEventHandler(
        qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], handler: DispatchSourceHandler?
    ) {}
    @available(macOS 10.10, iOS 8.0, *)
    public func setEventHandler(handler: DispatchWorkItem) {}
    public func setCancelHandler(
        qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], handler: DispatchSourceHandler?
    ) {}
    @available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
    public func activate() {}
}

public protocol DispatchSourceTimer: DispatchSourceProtocol {}

extension DispatchSourceTimer {
    public func schedule(
        deadline: DispatchTime, repeating interval: DispatchTimeInterval = .never,
        leeway: DispatchTimeInterval = .nanoseconds(0)
    ) {}
    public func schedule(
        deadline: DispatchTime, repeating interval: Double, leeway: DispatchTimeInterval = .nanoseconds(0)
    ) {}
    public func schedule(
        wallDeadline: DispatchWallTime, repeating interval: DispatchTimeInterval = .never,
        leeway: DispatchTimeInterval = .nanoseconds(0)
    ) {}
}

public class DispatchSource: DispatchObject, @unchecked Sendable {
    // Not Sendable in the iOS 17.4 SDK.
    public struct TimerFlags: OptionSet {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let strict = TimerFlags(rawValue: 1)
    }
    public class func makeTimerSource(flags: TimerFlags = [], queue: DispatchQueue? = nil) -> any DispatchSourceTimer {
        fatalError()
    }
}

// MARK: Preconditions

// Not Sendable in the iOS 17.4 SDK.
@available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
public enum DispatchPredicate {
    case onQueue(DispatchQueue)
    case onQueueAsBarrier(DispatchQueue)
    case notOnQueue(DispatchQueue)
}

@available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
public func dispatchPrecondition(condition: @autoclosure () -> DispatchPredicate) {}
