// A pretend file server and a classic download operation: enough to run the example without a
// network. Transfers take time on a virtual clock (1 ms per 10 KB), so the downloads finish in
// the order a real server would finish them, and always in the same order, however busy the
// machine is: the example's output is the same on every run.
import Foundation
import OperationBridge

/// A file on the server.
struct RemoteFile: Sendable, CustomStringConvertible {
    let name: String
    /// Size in kilobytes; `nil` when the file does not exist.
    let kilobytes: Int?

    var description: String { name }
}

enum DownloadError: Error, CancellationRepresentable {
    case notFound(String)
    case cancelled

    static var cancellation: DownloadError { .cancelled }
}

/// Serves files on a virtual clock: a transfer takes 1 ms per 10 KB (10 ms for a missing file),
/// measured from the virtual moment it was requested.
///
/// The server completes the transfer that ends first on its clock — but only once every
/// connection is busy, or no download of the batch is still waiting to start: so a download the
/// queue is about to start always gets its turn, as it would on a real network.
///
/// Safety: the mutable state is only touched while holding `lock`; completions run after the lock
/// is released.
final class FakeFileServer: @unchecked Sendable {
    private struct Transfer {
        let finishesAt: Int
        let order: Int
        let complete: @Sendable () -> Void
    }

    private let lock = NSLock()
    /// Delivers the completions one after the other, as one network connection would.
    private let network = DispatchQueue(label: "FakeFileServer.network")
    private let connections: Int
    /// Real time each 100 KB chunk takes to arrive: zero (instant) unless a person is watching.
    private let secondsPerChunk: Double
    private var now = 0
    private var requests = 0
    private var inFlight: [Transfer] = []
    /// The downloads of the current batches that have not requested their file yet.
    private var waitingToStart: [DownloadOperation] = []

    init(connections: Int, secondsPerChunk: Double = 0) {
        self.connections = connections
        self.secondsPerChunk = secondsPerChunk
    }

    /// Tells the server which downloads are coming.
    func expect(_ downloads: [DownloadOperation]) {
        lock.withLock { waitingToStart += downloads }
    }

    /// Calls `received` with each chunk's kilobytes (100 KB at most), then `completion` with the
    /// file's bytes, or `.notFound`, on another thread. Transfers cannot be interrupted.
    func download(
        _ file: RemoteFile,
        for operation: DownloadOperation,
        received: @escaping @Sendable (Int) -> Void,
        completion: @escaping @Sendable (Result<Data, DownloadError>) -> Void
    ) {
        let secondsPerChunk = secondsPerChunk
        lock.withLock {
            waitingToStart.removeAll { $0 === operation }
            let duration = (file.kilobytes ?? 100) / 10
            requests += 1
            inFlight.append(
                Transfer(finishesAt: now + duration, order: requests) {
                    if let kilobytes = file.kilobytes {
                        for chunk in stride(from: 0, to: kilobytes, by: 100) {
                            if secondsPerChunk > 0 { Thread.sleep(forTimeInterval: secondsPerChunk) }
                            received(min(100, kilobytes - chunk))
                        }
                        completion(.success(Data(count: kilobytes * 1024)))
                    } else {
                        completion(.failure(.notFound(file.name)))
                    }
                })
        }
        advance()
    }

    /// Completes the next transfer when it is time to.
    func advance() {
        let next: Transfer? = lock.withLock {
            waitingToStart.removeAll { $0.isCancelled || $0.isFinished }
            guard !inFlight.isEmpty, inFlight.count >= connections || waitingToStart.isEmpty else { return nil }
            let index = inFlight.indices.min {
                (inFlight[$0].finishesAt, inFlight[$0].order) < (inFlight[$1].finishesAt, inFlight[$1].order)
            }!
            let transfer = inFlight.remove(at: index)
            now = transfer.finishesAt
            return transfer
        }
        guard let next else { return }
        network.async {
            next.complete()
            self.advance()
        }
    }
}

/// Downloads one file: a classic callback-based result operation.
///
/// Cancelling it while the transfer runs records `.cancelled` as its result at once; the
/// operation finishes when the transfer ends (its late result is ignored: the first one wins).
final class DownloadOperation: AsyncResultOperation<Data, DownloadError>, @unchecked Sendable {
    let file: RemoteFile
    let server: FakeFileServer

    init(_ file: RemoteFile, from server: FakeFileServer) {
        self.file = file
        self.server = server
    }

    /// Reports the kilobytes received on its `bridge.operationProgress`, out of the file's size.
    override func main() {
        bridge.operationProgress.totalUnitCount = Int64(file.kilobytes ?? 0)
        server.download(file, for: self) { [self] kilobytes in
            bridge.operationProgress.advance(by: Int64(kilobytes))
        } completion: { [self] result in
            finish(with: result)
        }
    }

    override func cancel() {
        super.cancel()
        server.advance()  // a download cancelled before it started will not request its file
    }
}
