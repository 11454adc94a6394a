#if canImport(Darwin)
    import os
#else
    import Synchronization
#endif

/// The units an operation's work has reported on its progress, added to from any thread without
/// the progress's lock, and whether the progress has Foundation views to bring up to date.
///
/// A tight loop may report every unit: ``add(_:)`` is what ``OperationProgress/advance(by:)``
/// costs.
/// - Linux: two atomics, a report one atomic addition and a load (about half of a lock's two
///   atomic instructions and its sanitizer check; Design.md, "Progress").
/// - Apple platforms: `Atomic` needs macOS 15 / iOS 18, later than the package's minimums, so
///   both values sit under an `OSAllocatedUnfairLock` of their own: a report takes that lock
///   instead of the progress's, as before this type existed — and the progress one more small
///   allocation.
///
/// The count wraps past `Int64.max` rather than trap: no check per report for a count no work
/// reaches. Either way the two values are ordered as one: a report that does not see a view
/// added after it is counted in what that view shows first (``markViewsAdded()`` comes before
/// the view reads ``load()``).
struct ReportedUnits: ~Copyable, Sendable {
    #if canImport(Darwin)
        private let state = OSAllocatedUnfairLock(initialState: (units: Int64(0), hasViews: false))
    #else
        private let units = Atomic<Int64>(0)
        private let hasViews = Atomic<Bool>(false)
    #endif

    init() {}

    /// Adds `count` units. Returns whether the progress has Foundation views to refresh.
    @inline(__always)
    borrowing func add(_ count: Int64) -> Bool {
        #if canImport(Darwin)
            state.withLock { state in
                state.units &+= count
                return state.hasViews
            }
        #else
            // Sequentially consistent, with the load after it and with `markViewsAdded()`: of a
            // report and a view made at once, at least one sees the other.
            units.wrappingAdd(count, ordering: .sequentiallyConsistent)
            return hasViews.load(ordering: .sequentiallyConsistent)
        #endif
    }

    /// The units reported so far.
    borrowing func load() -> Int64 {
        #if canImport(Darwin)
            state.withLock { $0.units }
        #else
            units.load(ordering: .sequentiallyConsistent)
        #endif
    }

    /// Replaces the units reported so far with `count`.
    borrowing func store(_ count: Int64) {
        #if canImport(Darwin)
            state.withLock { $0.units = count }
        #else
            units.store(count, ordering: .sequentiallyConsistent)
        #endif
    }

    /// Records that the progress has Foundation views: from now on every report refreshes them.
    borrowing func markViewsAdded() {
        #if canImport(Darwin)
            state.withLock { $0.hasViews = true }
        #else
            hasViews.store(true, ordering: .sequentiallyConsistent)
        #endif
    }
}
