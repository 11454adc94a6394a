/// The order in which a streamed run delivers its results: see
/// `OperationQueue.results(streaming:maxInFlight:order:_:)`.
///
/// ## Cancellation and threading
/// A value, `Sendable`; it only shapes the run it is given to, which decides cancellation.
public struct StreamOrder: Sendable, Equatable {
    enum Kind: Equatable {
        case completion
        /// In input order, with this many finished results allowed to wait for an earlier one;
        /// `nil`: as many as `maxInFlight`.
        case input(reorderWindow: Int?)
    }

    let kind: Kind

    /// As the operations finish. At most `maxInFlight` inputs are pulled and not yet delivered.
    public static let completion = StreamOrder(kind: .completion)

    /// In the order of the inputs, with a reorder window of `maxInFlight`: see
    /// ``input(reorderWindow:)``.
    public static let input = StreamOrder(kind: .input(reorderWindow: nil))

    /// In the order of the inputs. A result that finishes before an earlier one waits for it;
    /// at most `reorderWindow` results wait so. When the window is full, no further input is
    /// pulled until the earliest one finishes, so a slow input holds up the stream but memory
    /// stays bounded: at most `maxInFlight` operations run and `maxInFlight + reorderWindow`
    /// inputs are pulled and not yet delivered.
    ///
    /// - Parameter reorderWindow: At least 1; a smaller value is a programmer error (it traps
    ///   when the run is created).
    public static func input(reorderWindow: Int) -> StreamOrder {
        StreamOrder(kind: .input(reorderWindow: reorderWindow))
    }
}
