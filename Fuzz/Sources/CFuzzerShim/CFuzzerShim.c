// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// Declarations only (CFuzzerShim.h); a C target needs a source file.
#include "CFuzzerShim.h"
