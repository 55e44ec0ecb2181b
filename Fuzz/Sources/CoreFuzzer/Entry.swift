// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CFuzzerShim
import SignalKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The differential fuzzer of SignalKit's operator algebra (see README.md).
//
// Built with `-sanitize=fuzzer,address` (scripts/fuzz), `main` hands the
// command line to libFuzzer's driver, which calls `fuzzOne` with each input
// and saves an input that crashes: a finding prints the program and what
// broke, and aborts. Built plainly, it replays the files (or folders of
// files) it is given and exits 1 at the first finding.

/// One input: decoded, run, checked.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let program = Program(decoding: UnsafeRawBufferPointer(start: data, count: size))
    if let finding = run(program) {
        print("FINDING: \(finding)")
        fflush(nil)
        abort()
    }
    return 0
}

@main
enum CoreFuzzer {
    static func main() {
        SignalKitDebug.isTrackingLiveObjects = true
        if csr_fuzzer_available() != 0 {
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
        }
        replay(Array(CommandLine.arguments.dropFirst()))
    }

    /// Runs every input in `paths` (files, or folders of files).
    static func replay(_ paths: [String]) {
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let bytes = read(file) else {
                    print("cannot read \(file)")
                    exit(2)
                }
                let program = bytes.withUnsafeBytes { Program(decoding: $0) }
                if getenv("SIGNALKIT_FUZZ_PRINT") != nil { print("\(file):\n\(program)") }
                if let finding = run(program) {
                    print("FINDING in \(file): \(finding)")
                    exit(1)
                }
                count += 1
            }
        }
        print("replayed \(count) inputs: no finding")
    }

    private static func files(at path: String) -> [String] {
        guard let directory = opendir(path) else { return [path] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(path + "/" + name) }
        }
        return names.sorted()
    }

    private static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }
}
