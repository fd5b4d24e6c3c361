package io.rdmx.transport.testsuite;

import io.rdmx.transport.NodeOptions;
import java.util.Optional;

/**
 * Where the suites' nodes bind when the host running them has two links to another host (the Soft-RoCE job's
 * "suites across the link" step): system property {@value #PROPERTY} = {@code A,B}, two addresses of this host on
 * two different links. Server-side nodes bind to {@code A}, every other node to {@code B}; the host's routes send
 * what one address sends to the other out over the other host, and back in on the other link, so a connection
 * between a server-side node and any other node crosses both links and the other host. Unset (everywhere else),
 * nothing changes.
 */
public final class TwoLinks {
    /** The system property naming the two addresses. */
    public static final String PROPERTY = "rdmx.test.twoLinks";

    private TwoLinks() {
    }

    /**
     * @param serverSide whether the address is for a server-side node
     * @return the address this side binds to, if {@value #PROPERTY} is set
     */
    public static Optional<String> address(boolean serverSide) {
        String v = System.getProperty(PROPERTY);
        if (v == null || v.isBlank()) {
            return Optional.empty();
        }
        String[] ab = v.split(",");
        if (ab.length != 2 || ab[0].isBlank() || ab[1].isBlank() || ab[0].strip().equals(ab[1].strip())) {
            throw new IllegalArgumentException(PROPERTY + " must be two different addresses, 'A,B'; got '" + v + "'");
        }
        return Optional.of((serverSide ? ab[0] : ab[1]).strip());
    }

    /**
     * @param b a node's options
     * @param serverSide whether the node is a server-side one
     * @return {@code b}, bound to this side's address (any port) if {@value #PROPERTY} is set
     */
    public static NodeOptions.Builder bind(NodeOptions.Builder b, boolean serverSide) {
        address(serverSide).ifPresent(a -> b.bindAddress(a + ":0"));
        return b;
    }
}
