// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
internal import GRPCCore
import SignalKit
import Synchronization

/// Caps on the calls a ``RemoteSignalService`` serves at once.
///
/// Each served call is a subscription holding a buffer of up to its bound:
/// without a cap, a caller that opens calls without end holds the server's
/// memory without end. Beyond a cap a new call ends at once with status
/// `resourceExhausted`, and a message naming the cap, before its request's
/// signal is made or subscribed; the calls already served go on. A slot is
/// free again when its call ends (completion, error, the client's
/// cancellation or disconnection, the server's shutdown).
///
/// ```swift
/// var service = RemoteSignalService(limits: RemoteSignalLimits(maximumCalls: 10_000, maximumCallsPerPeer: 100))
/// ```
public struct RemoteSignalLimits: Sendable, Hashable {
    /// The most calls the service serves at once, over all its methods and
    /// callers; nil: no cap.
    public var maximumCalls: Int?
    /// The most calls one peer (a client connection: its address and port,
    /// gRPC's `ServerContext.remotePeer`) has served at once; nil: no cap.
    public var maximumCallsPerPeer: Int?

    /// Caps (nil: none).
    public init(maximumCalls: Int? = nil, maximumCallsPerPeer: Int? = nil) {
        precondition(maximumCalls.map { $0 > 0 } ?? true, "RemoteSignalLimits: maximumCalls must be positive")  // invariant
        precondition(  // invariant
            maximumCallsPerPeer.map { $0 > 0 } ?? true, "RemoteSignalLimits: maximumCallsPerPeer must be positive")
        self.maximumCalls = maximumCalls
        self.maximumCallsPerPeer = maximumCallsPerPeer
    }
}

/// The calls a service serves now, by peer, against its limits.
final class _CallAdmission: Sendable {
    private struct State {
        var total = 0
        var byPeer: [String: Int] = [:]
    }

    let limits: RemoteSignalLimits
    private let state = _LockedState(State())

    init(_ limits: RemoteSignalLimits) {
        self.limits = limits
    }

    var servedCalls: Int { state.withLock { $0.total } }

    /// Admits a call from `peer`, or throws the `resourceExhausted` status
    /// naming the cap it would pass.
    func admit(peer: String) throws(RPCError) -> _CallTicket {
        let refusal = state.withLock { state -> RPCError? in
            if let cap = limits.maximumCalls, state.total >= cap {
                return RPCError(
                    code: .resourceExhausted,
                    message: "SignalKitGRPC: this service serves at most \(cap) calls at once (RemoteSignalLimits.maximumCalls)"
                )
            }
            let mine = state.byPeer[peer, default: 0]
            if let cap = limits.maximumCallsPerPeer, mine >= cap {
                return RPCError(
                    code: .resourceExhausted,
                    message:
                        "SignalKitGRPC: a peer has at most \(cap) calls served at once (RemoteSignalLimits.maximumCallsPerPeer); \(peer) has \(mine)"
                )
            }
            state.total += 1
            state.byPeer[peer] = mine + 1
            return nil
        }
        if let refusal { throw refusal }
        return _CallTicket(admission: self, peer: peer)
    }

    fileprivate func release(peer: String) {
        state.withLock { state in
            state.total -= 1
            let remaining = state.byPeer[peer, default: 1] - 1
            state.byPeer[peer] = remaining > 0 ? remaining : nil
        }
    }
}

/// An admitted call's slot: released once, when the call ends, or when the
/// response is dropped without having run.
final class _CallTicket: Sendable {
    private let admission: _CallAdmission
    private let peer: String
    private let released = Synchronization.Atomic<Bool>(false)

    fileprivate init(admission: _CallAdmission, peer: String) {
        self.admission = admission
        self.peer = peer
    }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        admission.release(peer: peer)
    }

    deinit { release() }
}
#endif  // GRPC
