import Foundation
import Testing

#if !canImport(Darwin)
    /// A Linux Foundation behaviour the package documents (Design.md, "Platform facts") and must
    /// not rely on: `removeDependency(_:)` of a dependency that has not finished leaves the
    /// operation not ready for good. Pinned here so that a Foundation that fixes it says so.
    @Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
    struct RemovedDependencyFactTests {
        @Test("Linux: removing an unfinished dependency leaves the operation not ready")
        func removingAnUnfinishedDependencyLeavesTheOperationNotReady() {
            let dependency = BlockOperation {}
            let operation = BlockOperation {}
            operation.addDependency(dependency)
            operation.removeDependency(dependency)
            #expect(operation.dependencies.isEmpty)
            #expect(!operation.isReady, "Foundation keeps counting the removed dependency as unfinished")
            // Never queued: a queue would hold it for good.
            withExtendedLifetime((dependency, operation)) {}
        }

        @Test("Linux: removing a dependency that has finished leaves the operation ready")
        func removingAFinishedDependencyLeavesTheOperationReady() {
            let dependency = BlockOperation {}
            let operation = BlockOperation {}
            operation.addDependency(dependency)
            dependency.start()
            operation.removeDependency(dependency)
            #expect(operation.isReady)
            withExtendedLifetime((dependency, operation)) {}
        }
    }
#endif
