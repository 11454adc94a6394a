/// Which of its forms a task operation's closure has: the case of a `TaskBody` or a
/// `ChainedTaskBody`, stored apart from the closure (``ErasedClosure``).
enum TaskBodyForm: UInt8 {
    /// Throws its typed `Failure`.
    case throwing
    /// Cannot fail.
    case nonThrowing
    /// Reports progress: the closure returns the box keeping the work with its progress
    /// (``ReportingBody``).
    case reporting
}

/// A closure whose function type is known only from a ``TaskBodyForm`` stored beside it.
///
/// `TaskOperation` and `ChainedTaskOperation` keep their closure as one of three function types.
/// As an enum, the closure's two words took a tag byte after them, and that byte moved each
/// operation into the next 16-byte allocation size class. Stored as this type, with the form in
/// a byte of its own, the form fits in padding the operation had anyway (Design.md, "Memory per
/// operation").
///
/// Every closure a task operation stores is an escaping closure of Swift's own calling
/// convention: two words — the function (for an `async` one, a pointer to its descriptor) and
/// its context, `nil` or a Swift reference-counted object — whatever its parameters, `async` or
/// `throws`. Reinterpreting one as another such function type keeps the context's reference
/// counting right; calling it as another type would not be, so the closure is only ever called
/// after ``restored(as:)`` gave it back its own type, the one its form says. On Apple's arm64e
/// (pointer authentication), the compiler signs a Swift function pointer for its function type,
/// not for the address it is stored at: reinterpreting it leaves its signature as it was, and
/// it is authenticated when called, as its own type again (read in the compiler's rules, not run
/// here: CI has no arm64e).
///
/// The closure comes in a struct whose one stored property is the closure, declared with its
/// function type (its *wrapper*) — nothing else may be stored this way: a bare closure handed to
/// a generic function is first wrapped in a reabstraction thunk — a heap allocation per
/// operation, and a second one when it is given back — while a struct is handed over as it is
/// (checked in the compiler's output, optimized and not).
struct ErasedClosure: Sendable {
    /// The closure, reinterpreted: never called as this type.
    private let closure: @Sendable () -> Void

    // Both inlined into their callers in optimized builds, where the wrapper's type is known: a
    // call of its own, in the package's unspecialized generic code, handles the wrapper through
    // its runtime metadata — as debug builds do, correctly, only slower.

    /// Stores the closure `wrapper` holds: a struct whose one stored property is an escaping
    /// Swift closure (`unsafeBitCast` traps only when the sizes differ: it cannot tell a wrong
    /// wrapper of the same size).
    @inline(__always)
    init<Wrapper: Sendable>(_ wrapper: Wrapper) {
        self = unsafeBitCast(wrapper, to: ErasedClosure.self)
    }

    /// The closure in the wrapper type it was stored from; asking for another type is a
    /// programmer error the compiler cannot catch (the size check traps only for a different
    /// size).
    @inline(__always)
    func restored<Wrapper: Sendable>(as _: Wrapper.Type) -> Wrapper {
        unsafeBitCast(self, to: Wrapper.self)
    }
}
