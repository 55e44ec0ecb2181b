/* This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE). */

/*
 * csr_ring.pml: the enqueue/park/wake protocol of csr_ring (the work queue
 * of `Queue(dedicatedThread:)`, Sources/CSignalRuntime/csr_ring.c), as its
 * file comment (Sources/CSignalRuntime/include/csr_ring.h) describes it, for
 * the model checker spin. Run it with `scripts/check-models` (a stage of
 * `scripts/test`): an exhaustive search, then the mutants below, which must
 * fail.
 *
 * What the search checks, over every interleaving of 2 producers pushing 2
 * items each and 1 consumer popping 4 items, with a ring of 2 cells (so the
 * spill list is used):
 *   1. No lost wake-up. The consumer blocks only in the futex wait; if it
 *      sleeps there while an item is pending and no producer will wake it,
 *      no process can move and spin reports an invalid end state (the
 *      consumer's blocking statement is not an end state).
 *   2. Per-producer FIFO: each consumed item is the next one its producer
 *      pushed (an assertion on every pop).
 *   3. Exactly-once delivery: no item is taken twice (the same assertion,
 *      and a bit per item), none is lost (the consumer ends with all 4), a
 *      cell is never overwritten while it holds an item, and at the end the
 *      ring and the spill list are empty.
 *
 * Memory model: sequential consistency. Every access the protocol relies on
 * is sequentially consistent or a full read-modify-write (the header says
 * so); each Promela statement below is one such access, and `atomic` groups
 * only what is one instruction in C (a compare-and-swap) or what a mutex
 * makes indivisible (the spill list).
 *
 * Mapping to the C code:
 *   producer, `csr_ring_push`:
 *     P1  load `spill_count`; non-zero: spill (P5).
 *     P2  load `tail` (the position), then the cell's sequence
 *         (`csr_ring_try_claim`): sequence == position: P3; sequence <
 *         position: the ring is full, spill (P5); sequence > position: another
 *         producer claimed it, reload `tail`.
 *     P3  the claim: compare-and-swap `tail` position -> position + 1 (full);
 *         failed: reload `tail` (P2). This is the producer's announcement.
 *     P4  write the item and publish it: sequence = position + 1 (one step:
 *         the consumer cannot see the item before the sequence). Between P3
 *         and P4 the consumer sees a claimed, unpublished cell.
 *     P5  `csr_ring_spill`: under the spill mutex, append the item and
 *         increment `spill_count` (the announcement). One step.
 *     P6  the wake check: load `parked`; 1: compare-and-swap `parked` 1 -> 0;
 *         if it succeeded, futex_wake. (-DDROP_WAKE removes P6.)
 *   consumer, `csr_ring_pop_wait` (CSR_WAIT_PARK; when the count is non-zero
 *   it calls `csr_ring_pop`, which looks at the cell again (C1), then makes
 *   C2 and C3; a drain calls `csr_ring_pop` alone, with `tail` before the
 *   count):
 *     C1  the cell at `head` published (sequence == head + 1): take its item,
 *         free the cell for the next lap (sequence = head + capacity), head++.
 *     C2  else load `spill_count`; non-zero: load `tail`; != head: busy (a
 *         cell is claimed, perhaps unpublished, perhaps published since C1
 *         looked): retry.
 *     C3  else (ring empty), under the spill mutex: if `tail` is still ==
 *         head, take the first spilled item and decrement `spill_count`;
 *         else retry. Either look at `tail` after the count suffices: the
 *         first spilled item was counted before C2's load, so its
 *         producer's earlier claims precede that load of `tail`; the look
 *         under the mutex also covers `csr_ring_pop`'s order (tail, then
 *         count). -DUNCHECKED_SPILL_TAKE drops both: then the ring C1 saw
 *         empty may have filled since with an item of a producer whose next
 *         item is the spilled one, and the order breaks.
 *     C4  else (nothing spilled) park: compare-and-swap `parked` 0 -> 1 (full; it cannot fail,
 *         only the consumer sets 1, and it stores 0 before it retries).
 *     C5  the re-check: load `tail` (!= head: store parked = 0, retry), then
 *         `spill_count` (non-zero: store parked = 0, retry). (-DDROP_RECHECK
 *         removes C5.)
 *     C6  futex_wait(&parked, 1): atomically, if parked == 1, go to sleep;
 *         then block until a futex_wake. Woken, or parked was not 1: store
 *         parked = 0 and retry.
 *   The futex: wait = atomic { parked == 1 -> sleeping = true } then block on
 *   !sleeping; wake = sleeping = false (a no-op when nobody sleeps, as a
 *   futex wake without waiters). Spurious wake-ups, timeouts and the spin
 *   phases of the other wait strategies are left out: they only make the
 *   consumer look again, which helps liveness and cannot break the safety
 *   properties above. Busy retries are plain loops (the producer they wait
 *   for is between two instructions).
 *
 * Safety only (pan is compiled with -DSAFETY): a lost wake-up is a state where
 * no process can move, which the safety search finds as an invalid end state;
 * a liveness search would need weak fairness and would only add the busy
 * retry loops (finite in C because the producer they wait for runs).
 *
 * scripts/check-models also requires that the search reaches every
 * statement: with these defaults it does (the spill path, a full ring, a
 * failed claim, the busy retry, C3's retry, a failed wake compare-and-swap,
 * the sleep and the wake-up). -DCAPACITY=N and -DNITEMS=N (at most 4) vary
 * the sizes by hand, e.g. `spin -DNITEMS=3 -a csr_ring.pml` (about a million
 * states); with CAPACITY >= 2 * NITEMS nothing spills.
 *
 * The mutants (scripts/check-models requires each to FAIL):
 *   -DDROP_WAKE            no wake check in push: invalid end state.
 *   -DDROP_RECHECK         the consumer sleeps after announcing without
 *                          looking again: invalid end state.
 *   -DUNCHECKED_SPILL_TAKE the consumer takes a spilled item on the strength
 *                          of C1's look at the ring, without looking at
 *                          `tail` after it saw the count (neither C2 nor the
 *                          look under the mutex): a producer's ring item and
 *                          its next, spilled item can both arrive in between,
 *                          and the spilled one is taken first: FIFO assertion.
 */

#ifndef CAPACITY
#define CAPACITY 2
#endif
#define NPRODUCERS 2
#ifndef NITEMS
#define NITEMS 2                        /* per producer (at most 4) */
#endif
#define TOTAL (NPRODUCERS * NITEMS)
/* An item is producer * NITEMS + index + 1 (0: no item). */
#define ITEM(p, k) ((p) * NITEMS + (k) + 1)
#define PRODUCER_OF(i) (((i) - 1) / NITEMS)
#define INDEX_OF(i) (((i) - 1) % NITEMS)

byte seq[CAPACITY];                     /* the cells' sequence numbers */
byte cell_item[CAPACITY];               /* the cells' items */
byte tail = 0;
byte head = 0;
chan spill = [TOTAL] of { byte };       /* the spill list (FIFO) */
byte spill_count = 0;
bit parked = 0;                         /* the futex word */
bool sleeping = false;                  /* the consumer is in futex_wait */

proctype producer(byte p) {
    byte k = 0;
    byte position;
    byte sequence;
    bool won;
    do
    :: k == NITEMS -> break
    :: else ->
        /* P1 */
        if
        :: spill_count != 0 -> goto spill_it
        :: else -> skip
        fi;
reload:
        /* P2 */
        position = tail;
claim:
        sequence = seq[position % CAPACITY];
        if
        :: sequence == position ->
            /* P3: compare-and-swap tail */
            atomic {
                if
                :: tail == position -> tail = position + 1; won = true
                :: else -> won = false
                fi
            };
            if
            :: won ->
                /* P4: write the item, publish */
                d_step {
                    assert(cell_item[position % CAPACITY] == 0);
                    cell_item[position % CAPACITY] = ITEM(p, k);
                    seq[position % CAPACITY] = position + 1
                };
                goto wake_check
            :: else -> goto reload
            fi
        :: sequence < position -> goto spill_it   /* full */
        :: sequence > position -> goto reload      /* claimed by another */
        fi;
spill_it:
        /* P5: under the spill mutex */
        atomic { spill!ITEM(p, k); spill_count++ };
wake_check:
#ifndef DROP_WAKE
        /* P6 */
        if
        :: parked == 1 ->
            atomic {
                if
                :: parked == 1 -> parked = 0; won = true
                :: else -> won = false
                fi
            };
            if
            :: won -> sleeping = false          /* futex_wake */
            :: else -> skip
            fi
        :: else -> skip
        fi;
#endif
        k++
    od
}

byte next[NPRODUCERS];                  /* the index each producer's next item must have */
byte delivered = 0;                     /* a bit per item */
byte consumed = 0;

/* Checks an item the consumer took: the next of its producer, never before. */
inline deliver(item) {
    assert(item != 0);
    assert(INDEX_OF(item) == next[PRODUCER_OF(item)]);
    assert((delivered & (1 << (item - 1))) == 0);
    delivered = delivered | (1 << (item - 1));
    next[PRODUCER_OF(item)]++;
    consumed++
}

proctype consumer() {
    byte item;
    do
    :: consumed == TOTAL -> break
    :: else ->
        if
        :: seq[head % CAPACITY] == head + 1 ->
            /* C1 */
            d_step {
                item = cell_item[head % CAPACITY];
                cell_item[head % CAPACITY] = 0;
                seq[head % CAPACITY] = head + CAPACITY;
                head++;
                deliver(item);
                item = 0
            }
        :: else ->
            if
            :: spill_count != 0 ->
#ifndef UNCHECKED_SPILL_TAKE
                if
                :: tail != head -> skip             /* C2: busy, retry */
                :: else ->
#endif
                    /* C3: under the spill mutex */
                    d_step {
#ifndef UNCHECKED_SPILL_TAKE
                        if
                        :: tail == head ->
#endif
                            assert(len(spill) > 0);
                            spill?item;
                            spill_count--;
                            deliver(item);
                            item = 0
#ifndef UNCHECKED_SPILL_TAKE
                        :: else -> skip             /* claimed meanwhile: retry */
                        fi
#endif
                    }
#ifndef UNCHECKED_SPILL_TAKE
                fi
#endif
            :: else ->
                    /* C4: announce */
                    atomic { assert(parked == 0); parked = 1 };
#ifndef DROP_RECHECK
                    /* C5: look again */
                    if
                    :: tail != head -> parked = 0; goto retry
                    :: else -> skip
                    fi;
                    if
                    :: spill_count != 0 -> parked = 0; goto retry
                    :: else -> skip
                    fi;
#endif
                    /* C6: futex_wait(&parked, 1) */
                    atomic {
                        if
                        :: parked == 1 -> sleeping = true
                        :: else -> skip
                        fi
                    };
                    !sleeping;      /* a lost wake-up blocks here forever */
                    parked = 0
            fi
        fi;
retry:
        skip
    od;
    /* Everything arrived exactly once; nothing is left behind. */
    assert(next[0] == NITEMS && next[1] == NITEMS);
    assert(delivered == (1 << TOTAL) - 1);
    assert(tail == head && spill_count == 0 && len(spill) == 0)
}

init {
    byte index;
    d_step {
        index = 0;
        do
        :: index < CAPACITY -> seq[index] = index; index++
        :: else -> break
        od
    };
    atomic {
        run producer(0);
        run producer(1);
        run consumer()
    }
}
