package io.rdmx.transport.capability;

/**
 * Corking: requests posted from {@link #cork} until the last {@link #uncork} may be held and handed to the medium
 * together (a socket provider writes their frames in one system call; the verbs post-list idea). Offered by the
 * stream providers ({@code shm}, {@code tcp}); without it every request goes out as it is posted.
 */
public interface Corking extends Capability {
    /**
     * Holds requests posted from now on. Posting threads call it around requests they post back to back (a
     * channel's WRITE and its notification). Nests; every cork needs its uncork, in a finally block. Other threads'
     * requests posted meanwhile are held too, in order.
     */
    void cork();

    /** Ends a {@link #cork}: at the last one, what it held goes out now. */
    void uncork();
}
