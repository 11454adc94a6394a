import Foundation

extension Pipeline {
    /// A picture of what the pipeline's unfinished steps wait for; see ``WaitGraph``.
    ///
    /// ```swift
    /// let pipeline = try Pipeline([export, migrate, verify], on: queue)
    /// pipeline.start()
    /// // …
    /// print(pipeline.waitGraph)
    /// ```
    ///
    /// It lists every step that has not finished, in the order of ``operations`` — also the steps
    /// the pipeline holds back until their dependencies in it have finished, which are not in the
    /// queue's list yet, and before ``start()`` says that the pipeline has not started — then the
    /// operations outside the pipeline they wait for, and, when a step waits for a free slot, the
    /// operations that hold the queue's slots.
    ///
    /// ## Cancellation and threading
    /// A snapshot of the moment it is read; reading it changes nothing and cancels nothing. Safe
    /// from any thread (see ``WaitGraph``).
    public var waitGraph: WaitGraph {
        let scheduler = run.scheduler
        let started = run.hasStarted
        let launched = scheduler.launchedNodes
        let queueName = scheduler.queue.map { QueueFacts($0).quotedName } ?? "'?'"
        var builder = WaitGraphBuilder(
            title: "pipeline on queue \(queueName)", mainQueue: scheduler.queue, scope: "pipeline")
        var finished = 0
        for (node, step) in scheduler.operations.enumerated() {
            guard !step.isFinished else {
                finished += 1
                continue
            }
            // A launched step is in the queue, unless it was found started or pending elsewhere.
            let placement: QueuePlacement? =
                launched[node] ? scheduler.queue.map { .queue($0) } : .heldByPipeline(started: started)
            builder.add(step, placement: step.hasBeenStarted ? nil : placement, seed: true)
        }
        let steps = scheduler.operations.count
        var heading = "Wait graph of a pipeline of \(steps) \(steps == 1 ? "step" : "steps"), \(finished) finished"
        heading += started ? "" : ", not started"
        if let queue = builder.queues.first { heading += ", on queue \(queue.description)" }
        builder.finish(heading: heading)
        return WaitGraph(builder)
    }
}
