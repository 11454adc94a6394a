import Foundation

extension QualityOfService {
    /// The quality of service that corresponds to a task priority.
    ///
    /// | `TaskPriority` | `QualityOfService` |
    /// |---|---|
    /// | `.high` (`.userInitiated`) and above | `.userInitiated` |
    /// | `.medium` up to `.high` | `.default` |
    /// | `.low` (`.utility`) up to `.medium` | `.utility` |
    /// | below `.low` (`.background`) | `.background` |
    ///
    /// The mapping compares priorities and switches over cases; it never uses raw values,
    /// which differ between Linux and Apple platforms for `QualityOfService`.
    public init(_ priority: TaskPriority) {
        if priority >= .high {
            self = .userInitiated
        } else if priority >= .medium {
            self = .default
        } else if priority >= .low {
            self = .utility
        } else {
            self = .background
        }
    }

    /// The rank of this quality of service, from `.background` (0) to `.userInteractive` (4).
    var rank: Int {
        switch self {
        case .background: 0
        case .utility: 1
        case .default: 2
        case .userInitiated: 3
        case .userInteractive: 4
        @unknown default: 2
        }
    }
}

extension TaskPriority {
    /// The task priority that corresponds to a quality of service.
    ///
    /// | `QualityOfService` | `TaskPriority` |
    /// |---|---|
    /// | `.userInteractive` | `.high` |
    /// | `.userInitiated` | `.high` |
    /// | `.default` | `.medium` |
    /// | `.utility` | `.utility` |
    /// | `.background` | `.background` |
    public init(_ qualityOfService: QualityOfService) {
        switch qualityOfService {
        case .userInteractive, .userInitiated: self = .high
        case .default: self = .medium
        case .utility: self = .utility
        case .background: self = .background
        @unknown default: self = .medium
        }
    }
}

extension Operation {
    /// Raises the operation's quality of service to match `priority`; never lowers it.
    func raiseQualityOfService(toMatch priority: TaskPriority) {
        let wanted = QualityOfService(priority)
        if wanted.rank > qualityOfService.rank {
            qualityOfService = wanted
        }
    }
}
