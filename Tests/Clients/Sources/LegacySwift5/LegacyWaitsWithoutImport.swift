import Foundation

// Legacy async code in a file that does not import the package, in a module that does: the
// package's extension members are visible here too, and must not change what these calls mean.

func legacyWaitsWithoutImport(queue: OperationQueue, operations: [Operation]) async {
    for operation in operations {
        queue.addOperation(operation)
        operation.waitUntilFinished()
    }
    queue.waitUntilAllOperationsAreFinished()
    queue.addOperations([BlockOperation {}], waitUntilFinished: true)
}
