package io.rdmx.affinity;

/** Pinning failed; the message names the call, the thread, the CPUs and the errno. */
public class AffinityException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int errno;

    /**
     * @param message what failed
     * @param errno the errno, or 0
     */
    public AffinityException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    /** @return the errno, or 0 */
    public int errno() {
        return errno;
    }
}
