package io.rdmx.transport;

/** Access flags of a registered region (a subset of {@code ibv_access_flags}). */
public final class Access {
    /** The local node may write into the region (RECV targets). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may WRITE into the region; only such regions are exported at connection setup. */
    public static final int REMOTE_WRITE = 2;
    /** Both. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE;

    private Access() {
    }

    /**
     * Checks a set of flags.
     *
     * @param access the flags
     * @return the flags
     * @throws IllegalArgumentException for unknown bits
     */
    public static int validate(int access) {
        if ((access & ~ALL) != 0) {
            throw new IllegalArgumentException("unknown access bits access=0x" + Integer.toHexString(access));
        }
        return access;
    }
}
