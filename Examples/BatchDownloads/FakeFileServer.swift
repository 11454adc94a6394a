// A pretend file server and a classic download operation: enough to run the example without a
// network. The server answers on another thread after a delay proportional to the file's size,
// so that the downloads finish in an order a person can follow; nothing depends on the timing.
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

/// Serves files after a delay of 1 ms per 10 KB (10 ms for a missing file).
struct FakeFileServer: Sendable {
    /// Calls `completion` with the file's bytes, or `.notFound`. Transfers cannot be interrupted.
    func download(_ file: RemoteFile, completion: @escaping @Sendable (Result<Data, DownloadError>) -> Void) {
        let delay = DispatchTimeInterval.milliseconds((file.kilobytes ?? 100) / 10)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            if let kilobytes = file.kilobytes {
                completion(.success(Data(count: kilobytes * 1024)))
            } else {
                completion(.failure(.notFound(file.name)))
            }
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

    override func main() {
        server.download(file) { [self] result in
            finish(with: result)
        }
    }
}
