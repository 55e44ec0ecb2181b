// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'RACCreation.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Config {}
struct ConfigError: Error {}
func loadConfig() throws(ConfigError) -> Config { Config() }
