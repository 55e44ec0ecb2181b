// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Testing

/// Every stress suite is nested in this one, so that they run one at a time:
/// they compare process-wide live-object counters before and after.
/// (`.serialized` orders the tests of one suite only.)
@Suite(.serialized) enum StressSuite {}
