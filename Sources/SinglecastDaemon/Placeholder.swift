package enum DaemonPlaceholder {}
