package enum CLIPlaceholder {}
