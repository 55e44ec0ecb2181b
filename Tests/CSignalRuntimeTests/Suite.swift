// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Testing

/// All CSignalRuntime tests run one at a time: several of them compare the
/// runtime's process-wide live counters before and after.
@Suite(.serialized) enum CSignalRuntimeSuite {}
