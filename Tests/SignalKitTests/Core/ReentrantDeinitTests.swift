// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

// A deviation from SwiftSignalKit: no deadlock when a value released by a container re-enters
// the same container from its deinit. One suite per container; each test
// releases a value (or disposable, or closure capture) whose deinit uses the
// container that releases it, and checks that the deinit ran to its end.
// `withoutDeadlock` turns a hang into a failure.

/// Counts the deinits that got through their re-entrant call.
private final class Reentries: @unchecked Sendable {
    private let count = Atomic(value: 0)
    func record() { count.modify { $0 + 1 } }
    var value: Int { count.with { $0 } }
}

@Suite struct PromiseReentrantDeinitTests {
    @Test func setReleasesTheClearedValueOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let promise = Promise<DeinitAction>()
            let pipe = ValuePipe<DeinitAction>()
            promise.set(pipe.signal())
            pipe.putNext(
                DeinitAction { [weak promise] in
                    promise?.get().start(next: { _ in }).dispose()
                    reentries.record()
                })
            promise.set(.never())
        }
        #expect(reentries.value == 1)
    }

    @Test func aNewValueReleasesTheOldOneOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let promise = Promise<DeinitAction>()
            let pipe = ValuePipe<DeinitAction>()
            promise.set(pipe.signal())
            pipe.putNext(
                DeinitAction { [weak promise] in
                    promise?.get().start(next: { _ in }).dispose()
                    reentries.record()
                })
            pipe.putNext(DeinitAction())
        }
        #expect(reentries.value == 1)
    }
}

@Suite struct ValuePromiseReentrantDeinitTests {
    @Test func setReleasesTheReplacedValueOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let promise = ValuePromise<DeinitAction>()
            promise.set(
                DeinitAction { [weak promise] in
                    promise?.get().start(next: { _ in }).dispose()
                    promise?.set(DeinitAction())
                    reentries.record()
                })
            promise.set(DeinitAction())
        }
        #expect(reentries.value == 1)
    }

    @Test func ignoreRepeatedReleasesTheReplacedValueOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let promise = ValuePromise<DeinitAction>(ignoreRepeated: true)
            promise.set(
                DeinitAction { [weak promise] in
                    promise?.get().start(next: { _ in }).dispose()
                    promise?.set(DeinitAction())
                    reentries.record()
                })
            promise.set(DeinitAction())
        }
        #expect(reentries.value == 1)
    }

    /// A value whose `==` subscribes to the promise it is compared in.
    struct Compared: Equatable, @unchecked Sendable {
        let id: Int
        let onCompare: () -> Void
        static func == (lhs: Compared, rhs: Compared) -> Bool {
            lhs.onCompare()
            return lhs.id == rhs.id
        }
    }

    @Test func ignoreRepeatedCallsEqualsOutsideTheLock() {
        let comparisons = Reentries()
        let delivered = Shared<[Int]>([])
        withoutDeadlock {
            let promise = ValuePromise<Compared>(ignoreRepeated: true)
            let box = WeakBox<ValuePromise<Compared>>(promise)
            let onCompare = {
                box.value?.get().start(next: { _ in }).dispose()
                comparisons.record()
            }
            let handle = promise.get().start(next: { delivered.value.append($0.id) })
            promise.set(Compared(id: 1, onCompare: onCompare))
            promise.set(Compared(id: 1, onCompare: onCompare))
            promise.set(Compared(id: 2, onCompare: onCompare))
            handle.dispose()
        }
        #expect(comparisons.value == 2)
        #expect(delivered.value == [1, 2])
    }
}

@Suite struct AtomicReentrantDeinitTests {
    @Test func modifyAndSwapReleaseTheOldValueOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let atomic = Atomic<DeinitAction>(value: DeinitAction())
            let box = WeakBox(atomic)
            atomic.swap(
                DeinitAction {
                    _ = box.value?.with { $0 }
                    reentries.record()
                })
            atomic.modify { _ in DeinitAction() }
            atomic.modify { _ in
                DeinitAction {
                    box.value?.modify { $0 }
                    reentries.record()
                }
            }
            _ = atomic.swap(DeinitAction())
        }
        #expect(reentries.value == 2)
    }
}

@Suite struct BagReentrantDeinitTests {
    @Test func removeReleasesTheItemOnceTheBagIsConsistent() {
        let seen = Shared<[Bool]>([])
        withoutDeadlock {
            let bag = Bag<DeinitAction>()
            let box = WeakBox(bag)
            let kept = bag.add(DeinitAction())
            // `add` numbers from 0: the second item's index is 1.
            let removed = bag.add(
                DeinitAction {
                    seen.value.append(box.value?.get(1) == nil)
                    seen.value.append(box.value?.get(kept) != nil)
                    _ = box.value?.add(DeinitAction())
                })
            #expect(removed == 1)
            bag.remove(removed)
            #expect(bag.copyItemsWithIndices().map(\.0) == [0, 2])
        }
        #expect(seen.value == [true, true])
    }

    @Test func removeAllReleasesTheItemsOnceTheBagIsEmpty() {
        let seen = Shared<[Bool]>([])
        withoutDeadlock {
            let bag = Bag<DeinitAction>()
            let box = WeakBox(bag)
            _ = bag.add(
                DeinitAction {
                    seen.value.append(box.value?.isEmpty ?? false)
                    _ = box.value?.add(DeinitAction())
                })
            bag.removeAll()
            #expect(bag.copyItems().count == 1)
        }
        #expect(seen.value == [true])
    }

    @Test func sparseBagRemoveAllReleasesTheItemsOnceTheBagIsEmpty() {
        let seen = Shared<[Bool]>([])
        withoutDeadlock {
            let bag = SparseBag<DeinitAction>()
            let box = WeakBox(bag)
            _ = bag.add(
                DeinitAction {
                    seen.value.append(box.value?.isEmpty ?? false)
                    _ = box.value?.add(DeinitAction())
                })
            bag.removeAll()
            #expect(!bag.isEmpty)
        }
        #expect(seen.value == [true])
    }
}

@Suite struct DisposableContainersReentrantDeinitTests {
    @Test func disposableSetReleasesOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let set = DisposableSet()
            let box = WeakBox(set)
            let reentrant = {
                DeinitActionDisposable {
                    box.value?.add(EmptyDisposable)
                    box.value?.remove(EmptyDisposable)
                    reentries.record()
                }
            }
            var first: (any Disposable)? = reentrant()
            set.add(first!)
            set.remove(first!)
            first = nil
            set.add(reentrant())
            set.removeLast()
            set.add(reentrant())
            set.dispose()
        }
        #expect(reentries.value == 3)
    }

    @Test func disposableDictReleasesOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let dict = DisposableDict<Int>()
            let box = WeakBox(dict)
            let reentrant = {
                DeinitActionDisposable {
                    box.value?.set(EmptyDisposable, forKey: 99)
                    reentries.record()
                }
            }
            dict.set(reentrant(), forKey: 1)
            dict.set(EmptyDisposable, forKey: 1)
            dict.set(reentrant(), forKey: 2)
            dict.set(nil, forKey: 2)
            dict.set(reentrant(), forKey: 3)
            dict.dispose()
        }
        #expect(reentries.value == 3)
    }

    @Test func metaDisposableReleasesOutsideTheSlot() {
        let reentries = Reentries()
        withoutDeadlock {
            let meta = MetaDisposable()
            let box = WeakBox(meta)
            meta.set(
                DeinitActionDisposable {
                    box.value?.set(EmptyDisposable)
                    reentries.record()
                })
            meta.set(EmptyDisposable)
            meta.set(
                DeinitActionDisposable {
                    box.value?.set(nil)
                    reentries.record()
                })
            meta.dispose()
        }
        #expect(reentries.value == 2)
    }
}

@Suite struct PipesAndSubjectsReentrantDeinitTests {
    @Test func valuePipeReleasesASubscribersCallbacksOutsideAnyLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let pipe = ValuePipe<Int>()
            let box = WeakBox(pipe)
            let capture = DeinitAction {
                box.value?.signal().start(next: { _ in }).dispose()
                box.value?.putNext(2)
                reentries.record()
            }
            let handle = pipe.signal().start(next: { _ in withExtendedLifetime(capture) {} })
            pipe.putNext(1)
            handle.dispose()
        }
        #expect(reentries.value == 1)
    }

    @Test func multicastReleasesASubscribersCallbacksOutsideAnyLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let multicast = Multicast<Int>()
            let pipe = ValuePipe<Int>()
            let capture = DeinitAction { [weak multicast] in
                multicast?.get(key: "k", signal: pipe.signal()).start(next: { _ in }).dispose()
                pipe.putNext(2)
                reentries.record()
            }
            let handle = multicast.get(key: "k", signal: pipe.signal())
                .start(next: { _ in withExtendedLifetime(capture) {} })
            pipe.putNext(1)
            handle.dispose()
        }
        #expect(reentries.value == 1)
    }

    @Test func subjectReleasesASubscribersCallbacksOutsideAnyLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let subject = Subject<Int, NoError>()
            let box = WeakBox(subject)
            let reentrant = {
                DeinitAction {
                    box.value?.signal().start(next: { _ in }).dispose()
                    box.value?.putNext(3)
                    reentries.record()
                }
            }
            let first = reentrant()
            let handle = subject.signal().start(next: { _ in withExtendedLifetime(first) {} })
            subject.putNext(1)
            handle.dispose()
            let second = reentrant()
            _ = subject.signal().start(completed: { withExtendedLifetime(second) {} })
            subject.putCompletion()
        }
        #expect(reentries.value == 2)
    }

    @Test func replaySubjectReleasesEvictedValuesOutsideTheLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let subject = ReplaySubject<DeinitAction, NoError>(capacity: 1)
            let box = WeakBox(subject)
            subject.putNext(
                DeinitAction {
                    box.value?.signal().start(next: { _ in }).dispose()
                    box.value?.putNext(DeinitAction())
                    reentries.record()
                })
            subject.putNext(DeinitAction())
        }
        #expect(reentries.value == 1)
    }
}

@Suite struct CommandAndEmitterReentrantDeinitTests {
    final class ReentrantError: Error, @unchecked Sendable {
        let action: () -> Void
        init(_ action: @escaping () -> Void) { self.action = action }
        deinit { action() }
    }

    @Test func commandReleasesQueuedEventsOutsideItsLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let box = WeakBox<Command<Int, Int, ReentrantError>>(nil)
            let command = Command<Int, Int, ReentrantError> { _ in
                .fail(
                    ReentrantError {
                        _ = box.value?.isExecuting
                        box.value?.errors.start(next: { _ in }).dispose()
                        reentries.record()
                    })
            }
            box.value = command
            let errors = command.errors.start(next: { _ in })
            command.execute(1).start(error: { _ in }).dispose()
            errors.dispose()
        }
        #expect(reentries.value == 1)
    }

    @Test func emitterReleasesTheLastDataOutsideAnyLock() {
        let reentries = Reentries()
        withoutDeadlock {
            let emitter = EventEmitter<DeinitAction>()
            let box = WeakBox(emitter)
            emitter.fire(
                DeinitAction {
                    box.value?.signal().start(next: { _ in }).dispose()
                    box.value?.fire(DeinitAction())
                    reentries.record()
                })
            emitter.fire(DeinitAction())
        }
        #expect(reentries.value == 1)
    }
}

@Suite struct SchedulingReentrantDeinitTests {
    @Test func queueLocalObjectReleasesItsValueOnItsQueueWithNoLockHeld() {
        let reentries = Reentries()
        withoutDeadlock {
            let queue = Queue(name: "QueueLocalObject re-entrant deinit")
            let released = DispatchSemaphore(value: 0)
            var object: QueueLocalObject<DeinitAction>? = QueueLocalObject(queue: queue) {
                DeinitAction {
                    let other = QueueLocalObject(queue: queue) { DeinitAction() }
                    other.with { _ in
                        reentries.record()
                        released.signal()
                    }
                }
            }
            object?.with { _ in }
            object = nil
            released.wait()
        }
        #expect(reentries.value == 1)
    }

    @Test func threadPoolReleasesATaskBeforeRelocking() {
        let reentries = Reentries()
        withoutDeadlock {
            let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
            let gate = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            // Holds the only thread until the test has let go of its task.
            pool.addTask(ThreadPoolTask { _ in gate.wait() })
            // The pool's reference to this task is the last one.
            pool.addTask(
                ThreadPoolTask {
                    [
                        capture = DeinitAction {
                            pool.addTask(
                                ThreadPoolTask { _ in
                                    reentries.record()
                                    finished.signal()
                                })
                        }
                    ] _ in withExtendedLifetime(capture) {}
                })
            gate.signal()
            finished.wait()
        }
        #expect(reentries.value == 1)
    }
}

@Suite struct SubscriptionReentrantDeinitTests {
    @Test func keepAliveObjectsAreReleasedOutsideTheSpinlock() {
        let reentries = Reentries()
        withoutDeadlock {
            let signal = Signal<Int, NoError> { subscriber in
                subscriber.keepAlive(
                    DeinitAction {
                        subscriber.keepAlive(DeinitAction())
                        subscriber.putNext(2)
                        reentries.record()
                    })
                return EmptyDisposable
            }
            signal.start(next: { _ in }).dispose()
        }
        #expect(reentries.value == 1)
    }
}

@Suite struct AsyncValuesReentrantDeinitTests {
    @Test func valuesReleasesReturnedValuesOutsideItsLock() async {
        let reentries = Reentries()
        let received = Shared<Int>(0)
        await withoutDeadlock {
            // Two values buffered at once: the first one is dropped by the
            // loop while the buffer may still refer to it; its deinit sends
            // to the same subscription.
            let signal = Signal<DeinitAction, NoError> { subscriber in
                subscriber.putNext(
                    DeinitAction {
                        subscriber.putNext(DeinitAction())
                        reentries.record()
                    })
                subscriber.putNext(DeinitAction())
                return EmptyDisposable
            }
            for await _ in signal.values {
                received.value += 1
                if received.value == 2 { break }
            }
        }
        #expect(reentries.value == 1)
        #expect(received.value == 2)
    }
}
