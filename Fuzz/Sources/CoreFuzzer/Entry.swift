// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import FuzzSupport
import SignalKit

// The differential fuzzer of SignalKit's operator algebra (see README.md):
// each input decodes into a program, run on SignalKit and on the model; a
// finding prints the program and what broke (FuzzMain aborts, and libFuzzer
// saves the input).

@main
enum CoreFuzzer {
    static func main() {
        SignalKitDebug.isTrackingLiveObjects = true
        FuzzMain.run(
            { input in run(Program(decoding: input)).map { "\($0)" } },
            describe: { input in "\(Program(decoding: input))" }
        )
    }
}
