/// Releases what a dying operation held — its dependencies, its typed upstream — one object at a
/// time on the releasing thread, instead of one stack frame per link.
///
/// Releasing the last reference to the tail of a chain frees the tail, whose storage releases its
/// dependency, whose storage releases the next one: Foundation itself recurses once per link, and
/// a few thousand links overflow the 512 KiB stack of Darwin's secondary threads (Design.md,
/// "Releasing long chains"). A package operation's `deinit` instead hands its links to
/// ``release(_:)``, which keeps a work list per thread:
///
/// - the outermost call on a thread drains the list in a loop, dropping one reference at a time;
/// - a call made while the list is being drained (an operation freed by that loop) only appends
///   its links and returns, so the stack never grows with the chain.
///
/// Everything is freed before the outermost `deinit` returns, on the thread that released the
/// chain. Operations that are not the package's free their dependencies as Foundation does: a
/// run of consecutive ones still recurses once per operation, until the next package operation.
enum IterativeRelease {
    /// Drops `links`, each possibly the last reference to an operation: at once, one after
    /// another, or — when this thread is already draining — after the current drain step.
    static func release(_ links: consuming [AnyObject]) {
        let list = WorkList.forCurrentThread
        if list.isDraining {
            list.pending.append(contentsOf: links)
            return
        }
        list.isDraining = true
        // Moved: a copy would share the buffer, and `popLast()` would then copy it again, leaving
        // the parameter holding every link until it is destroyed — the recursion this avoids.
        list.pending = consume links
        // Each `popLast()` moves the reference out of the list: it is dropped at the end of the
        // iteration, and a `deinit` that runs then appends to `pending` instead of recursing.
        while let link = list.pending.popLast() {
            _ = consume link
        }
        list.isDraining = false
        // Keeps a large drain's buffer from living as long as the thread.
        if list.pending.capacity > 1024 { list.pending = [] }
    }

    /// ``release(_:)`` for one reference (a chain's link), without an array made
    /// for it.
    static func release(only link: consuming AnyObject) {
        let list = WorkList.forCurrentThread
        // Moved into the list: this function must not hold the reference when it returns.
        list.pending.append(consume link)
        if list.isDraining { return }
        list.isDraining = true
        while let next = list.pending.popLast() {
            _ = consume next
        }
        list.isDraining = false
        if list.pending.capacity > 1024 { list.pending = [] }
    }

    /// One thread's list of references still to drop.
    ///
    /// Safety: not `Sendable` — one instance per thread, reached only through that thread's
    /// ``ThreadSpecific`` slot.
    private final class WorkList {
        var pending: [AnyObject] = []
        var isDraining = false

        /// This thread's list (``ThreadSpecific``: released when the thread exits).
        static var forCurrentThread: WorkList { lists.current }
        private static let lists = ThreadSpecific { WorkList() }
    }
}
