/// The order in which a results sequence delivers its elements.
public enum ResultOrder: Sendable {
    /// As the operations finish.
    case completion
    /// In the order the operations were given, each as soon as it and all before it have
    /// finished.
    case submission
}
