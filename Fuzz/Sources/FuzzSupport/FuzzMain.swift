// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CFuzzerShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The `main` every fuzzer shares. Built with libFuzzer's instrumentation
// (scripts/fuzz), it hands the command line to libFuzzer's driver, which
// calls the fuzzer's check with each input and saves an input that makes it
// abort. Built plainly, it replays the files (or folders of files) it is
// given and exits 1 at the first finding (with `SIGNALKIT_FUZZ_TIMES=1`, it
// prints how long each input took, in microseconds).

/// A fuzzer's check of one input: nil when the input passes, else what broke.
public typealias FuzzCheck = (UnsafeRawBufferPointer) -> String?

/// The check libFuzzer's callback runs (a C function pointer cannot capture
/// it). Set once, before the driver starts; the driver calls from one thread.
nonisolated(unsafe) private var installedCheck: FuzzCheck?

public enum FuzzMain {
    /// Runs `check` under libFuzzer's driver when it is linked, else on every
    /// file named on the command line. `describe` (optional) prints an input
    /// the way the fuzzer reads it, for `SIGNALKIT_FUZZ_PRINT=1` replays.
    public static func run(_ check: @escaping FuzzCheck, describe: ((UnsafeRawBufferPointer) -> String)? = nil) -> Never {
        if csr_fuzzer_available() != 0 {
            installedCheck = check
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    if let finding = installedCheck!(UnsafeRawBufferPointer(start: data, count: size)) {
                        print("FINDING: \(finding)")
                        fflush(nil)
                        abort()
                    }
                    return 0
                })
        }
        var count = 0
        let timing = getenv("SIGNALKIT_FUZZ_TIMES") != nil
        for path in CommandLine.arguments.dropFirst() {
            for file in files(at: path) {
                guard let bytes = read(file) else {
                    print("cannot read \(file)")
                    exit(2)
                }
                let started = timing ? monotonicNanoseconds() : 0
                let finding = bytes.withUnsafeBytes { input -> String? in
                    if let describe, getenv("SIGNALKIT_FUZZ_PRINT") != nil {
                        print("\(file):\n\(describe(input))")
                        fflush(nil)  // before a crash in `check`
                    }
                    return check(input)
                }
                if timing { print("\((monotonicNanoseconds() - started) / 1000) µs \(file)") }
                if let finding {
                    print("FINDING in \(file): \(finding)")
                    exit(1)
                }
                count += 1
            }
        }
        print("replayed \(count) inputs: no finding")
        exit(0)
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
