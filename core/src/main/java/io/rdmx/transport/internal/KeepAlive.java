package io.rdmx.transport.internal;

/**
 * When an RDMA connection probes its peer and when it presumes the peer dead: the keep-alive policy of the
 * hardware providers ({@code verbs}, {@code disni}), apart from the verbs that carry it out, so it is tested
 * with a fake clock.
 *
 * <p>A probe is a small signaled WRITE to the peer's keep-alive target (a few bytes at the end of the peer's
 * control region, announced in {@link SetupMessage#probe}). RC acknowledges it in hardware, so only a peer
 * whose machine, NIC or queue pair is gone leaves it unanswered. The policy:
 * <ul>
 *   <li>an idle connection (no user sends outstanding) probes once {@link #interval()} (a quarter of the peer
 *       timeout) has passed since the last probe completed (or since the connection was set up);</li>
 *   <li>while user sends are outstanding they are the probes: the hardware's retries end in an error
 *       completion if the peer is gone (a SEND waiting for a receive the peer has not posted yet is not a
 *       failure), so no probe is added;</li>
 *   <li>a probe not completed within the peer timeout means the peer is gone: {@link Decision#PEER_SILENT};</li>
 *   <li>a probe that completes with an error means the same, at once (the provider reads the status).</li>
 * </ul>
 *
 * <p>Times are {@code System.nanoTime()} values passed in by the caller, compared by subtraction (they may
 * wrap). Not thread-safe: the owner calls it under its endpoint's lock, like {@link WorkQueues}.
 */
public final class KeepAlive {
    /** Bytes at the end of a provider's control region that the peer's probes WRITE: its keep-alive target. */
    public static final int TARGET_BYTES = 64;
    /** Bytes each probe WRITEs. */
    public static final int PROBE_LENGTH = 8;

    /** What the owner does now. */
    public enum Decision {
        /** Nothing: a probe is in flight and not late, or the connection is busy or was probed recently. */
        WAIT,
        /** Post a probe now, then call {@link #probePosted}. */
        PROBE,
        /** The probe in flight is older than the peer timeout: fail the connection, naming the peer. */
        PEER_SILENT
    }

    private final long peerTimeoutNanos;
    private final long intervalNanos;
    private boolean inFlight;
    private long postedAt;
    private long lastDoneAt;

    /**
     * @param peerTimeoutNanos the node's peer timeout, in nanoseconds (positive)
     * @param now {@code System.nanoTime()} when the connection was set up
     * @throws IllegalArgumentException if the timeout is not positive
     */
    public KeepAlive(long peerTimeoutNanos, long now) {
        if (peerTimeoutNanos <= 0) {
            throw new IllegalArgumentException("peerTimeoutNanos=" + peerTimeoutNanos + " must be positive");
        }
        this.peerTimeoutNanos = peerTimeoutNanos;
        this.intervalNanos = Math.max(1, peerTimeoutNanos / 4);
        this.lastDoneAt = now;
    }

    /**
     * Decides what to do now; called periodically (the providers' sweeps, a few times per interval).
     *
     * @param now {@code System.nanoTime()}
     * @param sendsOutstanding whether user sends are posted and not yet completed
     * @return what to do
     */
    public Decision decide(long now, boolean sendsOutstanding) {
        if (inFlight) {
            return now - postedAt > peerTimeoutNanos ? Decision.PEER_SILENT : Decision.WAIT;
        }
        if (!sendsOutstanding && now - lastDoneAt >= intervalNanos) {
            return Decision.PROBE;
        }
        return Decision.WAIT;
    }

    /**
     * The probe that {@link #decide} asked for was posted.
     *
     * @param now {@code System.nanoTime()} of the post
     */
    public void probePosted(long now) {
        inFlight = true;
        postedAt = now;
    }

    /**
     * The probe completed, with any status (an error status is the provider's to report: see the class comment).
     *
     * @param now {@code System.nanoTime()} of the completion
     */
    public void probeCompleted(long now) {
        inFlight = false;
        lastDoneAt = now;
    }

    /** @return whether a probe is posted and not completed */
    public boolean probeInFlight() {
        return inFlight;
    }

    /** @return how long an idle connection waits between probes, in nanoseconds: a quarter of the peer timeout */
    public long interval() {
        return intervalNanos;
    }

    /**
     * @param peerName the peer's node name
     * @param peerAddress the peer's address
     * @return why the connection fails after {@link Decision#PEER_SILENT}
     */
    public String silentPeerReason(String peerName, String peerAddress) {
        return "peer '" + peerName + "' (" + peerAddress + ") did not acknowledge a keep-alive WRITE within "
            + peerTimeoutNanos / 1_000_000 + " ms (peerTimeout)";
    }

    /**
     * @param peerName the peer's node name
     * @param peerAddress the peer's address
     * @param status the provider's name of the probe's completion status
     * @return why the connection fails after a probe completed with an error
     */
    public static String unreachableReason(String peerName, String peerAddress, String status) {
        return "peer '" + peerName + "' (" + peerAddress + ") is unreachable: keep-alive WRITE failed with " + status;
    }
}
