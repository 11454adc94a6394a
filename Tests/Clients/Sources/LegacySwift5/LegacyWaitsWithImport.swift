import Foundation
import OperationBridge

// Legacy async code in a file that imports the package. Every call below is Foundation's blocking
// wait — a warning from async code in the Swift 5 language mode — and must still resolve to it:
// the package names its async waits differently (`waitForCompletion()`, `waitForAllOperations()`).

/// A classic result operation, as legacy code writes it.
final class LegacyDownload: AsyncResultOperation<Int, URLError>, @unchecked Sendable {
    override func main() {
        finish(with: .success(1))
    }
}

func legacyWaitsWithImport(queue: OperationQueue) async -> Int? {
    let download = LegacyDownload()
    queue.addOperation(download)
    download.waitUntilFinished()
    queue.waitUntilAllOperationsAreFinished()
    queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    queue.addOperations([BlockOperation {}], waitUntilFinished: false)
    return try? download.result?.get()
}

/// The same calls through a generic function and an existential, where overload resolution
/// could pick another candidate.
func legacyWaits<Queue: OperationQueue>(on queue: Queue, operation: any AnyObject & Sendable) async {
    (operation as? Operation)?.waitUntilFinished()
    queue.waitUntilAllOperationsAreFinished()
}
