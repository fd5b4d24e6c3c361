package io.rdmx.transport;

/** Access flags of a registered region (a subset of {@code ibv_access_flags}). */
public final class Access {
    /** The local node may write into the region (RECV targets). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may WRITE into the region; exported at connection setup (as {@link #REMOTE_READ} regions are). */
    public static final int REMOTE_WRITE = 2;
    /** Both. Reading by peers is never implied: {@link #REMOTE_READ} is granted on its own. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE;
    /**
     * Peers may READ the region. Exported at connection setup like {@link #REMOTE_WRITE} (a node-wide region), or
     * told to one peer (a region {@link Connection#register granted} to its connection); the only access of a
     * region {@link Node#registerFile backed by a file}.
     */
    public static final int REMOTE_READ = 4;

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
        if ((access & ~(ALL | REMOTE_READ)) != 0) {
            throw new IllegalArgumentException("unknown access bits access=0x" + Integer.toHexString(access));
        }
        return access;
    }
}
