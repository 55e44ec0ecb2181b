// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// The use cases of the seed articles (../shared/seeds/000 and 003), end to
// end on virtual time: Telegram's username availability check in
// UsernameSetupController and the location-authorization flow of
// LocationPickerController. The queues that are Dispatch queues in the app
// (the main queue, the default concurrent queue, the network) are virtual
// queues here, so every step happens at a known virtual time.

// MARK: - Username availability (UsernameSetupController)

enum AddressNameFormatError: Equatable {
    case startsWithDigit
    case tooShort
    case invalidCharacters
}

enum AddressNameAvailability: Equatable {
    case available
    case taken
}

enum AddressNameValidationStatus: Equatable {
    case checking
    case invalidFormat(AddressNameFormatError)
    case availability(AddressNameAvailability)
}

struct UsernameSetupControllerState: Equatable {
    var editingPublicLinkText: String?
    var addressNameValidationStatus: AddressNameValidationStatus?
    var updatingAddressName = false

    func withUpdatedEditingPublicLinkText(_ text: String?) -> UsernameSetupControllerState {
        var state = self
        state.editingPublicLinkText = text
        return state
    }

    func withUpdatedAddressNameValidationStatus(_ status: AddressNameValidationStatus?) -> UsernameSetupControllerState {
        var state = self
        state.addressNameValidationStatus = status
        return state
    }
}

/// The local check: at least 5 characters, letters, digits and `_` only,
/// not starting with a digit.
func checkAddressNameFormat(_ name: String) -> AddressNameFormatError? {
    if let first = name.first, first.isNumber { return .startsWithDigit }
    if !name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return .invalidCharacters }
    if name.count < 5 { return .tooShort }
    return nil
}

/// The backend: answers 0.5 s after the request, on the network queue.
/// Taken names are listed; requests and cancellations are logged.
final class UsernameBackend: Sendable {
    let network: Queue
    let log: @Sendable (String) -> Void
    let taken: Set<String>

    init(network: Queue, taken: Set<String>, log: @escaping @Sendable (String) -> Void) {
        self.network = network
        self.log = log
        self.taken = taken
    }

    func addressNameAvailability(name: String) -> Signal<AddressNameAvailability, NoError> {
        Signal { subscriber in
            self.log("request \(name)")
            let reply =
                Signal<AddressNameAvailability, NoError>.single(self.taken.contains(name) ? .taken : .available)
                |> delay(0.5, queue: self.network)
            let handle = reply.start(
                next: { subscriber.putNext($0) },
                completed: { subscriber.putCompletion() }
            )
            return ActionDisposable {
                handle.dispose()
                self.log("request \(name) released")
            }
        }
    }
}

/// The validation pipeline of seed 003 (#3), with the app's default queue
/// replaced by `delayQueue`.
func validateAddressNameInteractive(
    name: String,
    backend: UsernameBackend,
    delayQueue: Queue
) -> Signal<AddressNameValidationStatus, NoError> {
    if let error = checkAddressNameFormat(name) {
        return .single(.invalidFormat(error))
    } else {
        return .single(.checking)
            |> then(
                backend.addressNameAvailability(name: name)
                    |> delay(0.3, queue: delayQueue)
                    |> map { .availability($0) }
            )
    }
}

func describe(_ status: AddressNameValidationStatus) -> String {
    switch status {
    case .checking: "checking"
    case .invalidFormat(let error): "invalid(\(error))"
    case .availability(let availability): "\(availability)"
    }
}

@Suite struct SeedUseCaseTests {
    @Test func usernameAvailabilityCheckOnVirtualTime() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let defaultQueue = scheduler.makeQueue(name: "default")
        let network = scheduler.makeQueue(name: "network")
        let log = EventLog()
        /// Virtual time in milliseconds, then the entry.
        @Sendable func record(_ entry: String) {
            log.append("\(Int((scheduler.now * 1000).rounded()))ms \(entry)")
        }
        let backend = UsernameBackend(network: network, taken: ["alice"], log: record)

        // #2: the state, with a synchronous copy next to the promise.
        let statePromise = ValuePromise(UsernameSetupControllerState(), ignoreRepeated: true)
        let stateValue = Atomic(value: UsernameSetupControllerState())

        // #5: the UI from three signals (theme, state, account).
        let presentationData = ValuePromise("day")
        let peerView = ValuePromise("@old_name")
        let ui = combineLatest(presentationData.get(), statePromise.get() |> deliverOn(main), peerView.get())
            .start(next: { theme, state, peer in
                let status = state.addressNameValidationStatus.map(describe) ?? "-"
                let enabled = state.addressNameValidationStatus == .availability(.available)
                record(
                    "ui \(theme) \(peer) text=\(state.editingPublicLinkText ?? "nil") \(status) \(enabled ? "[Done]" : "[done]")")
            })

        // #4: one check at a time; each keystroke cancels the previous one.
        let checkAddressNameDisposable = MetaDisposable()
        func textChanged(_ text: String) {
            record("typed \"\(text)\"")
            if text.isEmpty {
                checkAddressNameDisposable.set(nil)
                statePromise.set(
                    stateValue.modify {
                        $0.withUpdatedEditingPublicLinkText(text).withUpdatedAddressNameValidationStatus(nil)
                    })
            } else {
                statePromise.set(stateValue.modify { $0.withUpdatedEditingPublicLinkText(text) })
                checkAddressNameDisposable.set(
                    (validateAddressNameInteractive(name: text, backend: backend, delayQueue: defaultQueue)
                        |> deliverOn(main))
                        .start(next: { result in
                            statePromise.set(stateValue.modify { $0.withUpdatedAddressNameValidationStatus(result) })
                        })
                )
            }
        }

        scheduler.run()  // the first UI state
        textChanged("1al")  // invalid: starts with a digit
        scheduler.advance(by: 0.1)
        textChanged("alic")  // invalid: too short
        scheduler.advance(by: 0.1)
        textChanged("alice")  // checking; cancelled by the next keystroke before its request
        scheduler.advance(by: 0.1)
        textChanged("alice_")  // checking; the request leaves at +0.3, the answer at +0.8
        scheduler.advance(by: 1.0)
        textChanged("alice")  // taken
        scheduler.advance(by: 1.0)
        textChanged("bob_smith")  // cancelled after its request left
        scheduler.advance(by: 0.4)
        textChanged("")  // cleared: no check
        scheduler.run()
        presentationData.set("night")  // the theme changes the UI too
        scheduler.run()

        // The local check answers at once; "alice" (0.2 s) never reaches the
        // backend: the next keystroke came before its 0.3 s delay ran out.
        // "alice" (1.3 s) is answered 0.3 + 0.5 s later; "bob_smith" is
        // cancelled in flight by clearing the field. Repeated states are not
        // re-rendered ("alice_" stays `checking`).
        #expect(
            log.take() == [
                "0ms ui day @old_name text=nil - [done]",
                "0ms typed \"1al\"",
                "0ms ui day @old_name text=1al - [done]",
                "0ms ui day @old_name text=1al invalid(startsWithDigit) [done]",
                "100ms typed \"alic\"",
                "100ms ui day @old_name text=alic invalid(startsWithDigit) [done]",
                "100ms ui day @old_name text=alic invalid(tooShort) [done]",
                "200ms typed \"alice\"",
                "200ms ui day @old_name text=alice invalid(tooShort) [done]",
                "200ms ui day @old_name text=alice checking [done]",
                "300ms typed \"alice_\"",
                "300ms ui day @old_name text=alice_ checking [done]",
                "600ms request alice_",
                "1100ms request alice_ released",
                "1100ms ui day @old_name text=alice_ available [Done]",
                "1300ms typed \"alice\"",
                "1300ms ui day @old_name text=alice available [Done]",
                "1300ms ui day @old_name text=alice checking [done]",
                "1600ms request alice",
                "2100ms request alice released",
                "2100ms ui day @old_name text=alice taken [done]",
                "2300ms typed \"bob_smith\"",
                "2300ms ui day @old_name text=bob_smith taken [done]",
                "2300ms ui day @old_name text=bob_smith checking [done]",
                "2600ms request bob_smith",
                "2700ms typed \"\"",
                "2700ms request bob_smith released",
                "2700ms ui day @old_name text= - [done]",
                "3100ms ui night @old_name text= - [done]",
            ])
        ui.dispose()
        checkAddressNameDisposable.dispose()
        scheduler.run()
        #expect(log.take() == [], "nothing runs after disposal")
    }

    // MARK: Location authorization (LocationPickerController, seed 000 #1)

    @Test(arguments: [
        (LocationAuthorization.notDetermined, ["status notDetermined", "authorizeAccess", "present alert", "open settings"]),
        (LocationAuthorization.denied, ["status denied", "forceSelection true"]),
        (LocationAuthorization.restricted, ["status denied", "forceSelection true"]),
        (LocationAuthorization.authorizedWhenInUse, ["status allowed"]),
        (LocationAuthorization.authorizedAlways, ["status allowed"]),
    ])
    func locationAuthorizationFlow(system: LocationAuthorization, expected: [String]) {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let log = EventLog()
        let device = DeviceAccess(status: system, log: log)
        var controller: LocationPickerController? = LocationPickerController(device: device, main: main, log: log)
        weak let weakController = controller
        controller?.loadDisplayNode()
        #expect(log.take() == [], "the status is delivered on the main queue, not synchronously")
        scheduler.run()
        #expect(log.take() == expected)
        controller = nil
        #expect(weakController == nil)
        #expect(log.take() == ["permissionDisposable disposed"])
    }

    @Test func aControllerReleasedBeforeTheStatusArrivesIgnoresIt() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let log = EventLog()
        let device = DeviceAccess(status: .denied, log: log)
        var controller: LocationPickerController? = LocationPickerController(device: device, main: main, log: log)
        controller?.loadDisplayNode()
        controller = nil  // deinit disposes: the queued delivery is dropped
        scheduler.run()
        #expect(log.take() == ["permissionDisposable disposed"])
    }
}

/// The system's location authorization (CLAuthorizationStatus).
enum LocationAuthorization: Sendable, CustomStringConvertible {
    case notDetermined
    case restricted
    case denied
    case authorizedAlways
    case authorizedWhenInUse

    var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .restricted: "restricted"
        case .denied: "denied"
        case .authorizedAlways: "authorizedAlways"
        case .authorizedWhenInUse: "authorizedWhenInUse"
        }
    }
}

enum AccessType: Equatable {
    case notDetermined
    case allowed
    case denied
    case restricted
    case unreachable
}

/// DeviceAccess of seed 000: the status as a one-value signal, and the
/// authorization request (which presents an alert and may open settings).
final class DeviceAccess: @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let status: LocationAuthorization
    let log: EventLog

    init(status: LocationAuthorization, log: EventLog) {
        self.status = status
        self.log = log
    }

    func authorizationStatus() -> Signal<AccessType, NoError> {
        Signal { subscriber in
            switch self.status {
            case .authorizedAlways, .authorizedWhenInUse:
                subscriber.putNext(.allowed)
            case .denied, .restricted:
                subscriber.putNext(.denied)
            case .notDetermined:
                subscriber.putNext(.notDetermined)
            }
            subscriber.putCompletion()
            return EmptyDisposable
        }
    }

    func authorizeAccess(present: (String) -> Void, openSettings: () -> Void) {
        log.append("authorizeAccess")
        present("alert")
        openSettings()
    }
}

/// LocationPickerController of seed 000: observes the status on the main
/// queue, holds the subscription in a field and disposes it in `deinit`.
final class LocationPickerController: @unchecked Sendable {
    // `@unchecked Sendable`: used on the test's thread only.
    let device: DeviceAccess
    let main: Queue
    let log: EventLog
    var forceSelection = false
    var permissionDisposable: (any Disposable)?

    init(device: DeviceAccess, main: Queue, log: EventLog) {
        self.device = device
        self.main = main
        self.log = log
    }

    func loadDisplayNode() {
        permissionDisposable = (device.authorizationStatus() |> deliverOn(main))
            .start(next: { [weak self] next in
                guard let strongSelf = self else { return }
                strongSelf.log.append("status \(next)")
                switch next {
                case .notDetermined:
                    strongSelf.device.authorizeAccess(
                        present: { _ in strongSelf.log.append("present alert") },
                        openSettings: { strongSelf.log.append("open settings") }
                    )
                case .denied:
                    strongSelf.forceSelection = true
                    strongSelf.log.append("forceSelection true")
                default:
                    break
                }
            })
    }

    deinit {
        permissionDisposable?.dispose()
        log.append("permissionDisposable disposed")
    }
}
