package io.rdmx.shuffle;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Helpers for endpoint lists. */
public final class Endpoints {
    private Endpoints() {
    }

    /**
     * Free TCP endpoints on the loopback interface, for running every process of a job on this host.
     *
     * @param n how many
     * @return {@code 127.0.0.1:port} entries (free when returned; another program may take one before use)
     * @throws IOException if no port can be had
     */
    public static List<String> freeLocal(int n) throws IOException {
        List<String> out = new ArrayList<>();
        List<ServerSocket> hold = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0);
                hold.add(s);
                out.add("127.0.0.1:" + s.getLocalPort());
            }
        } finally {
            for (ServerSocket s : hold) {
                s.close();
            }
        }
        return out;
    }
}
