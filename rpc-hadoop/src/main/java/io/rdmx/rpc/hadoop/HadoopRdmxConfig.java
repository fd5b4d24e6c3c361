package io.rdmx.rpc.hadoop;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.RdmxException;
import java.time.Duration;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;

/**
 * The {@code rdmx.rpc.hadoop.*} keys, read from the Hadoop {@link Configuration} the engine is given (so they go
 * in {@code core-site.xml} or the daemon's site file like any Hadoop key), validated once per server or proxy.
 * Sizes come from Hadoop's own keys: {@code ipc.maximum.data.length} bounds requests on both sides and
 * {@code ipc.maximum.response.length} bounds responses a client accepts.
 */
final class HadoopRdmxConfig {
    /**
     * Server: the rdmx provider of the listener beside the TCP one: {@value #AUTO}, {@value #OFF}, or the name of a
     * provider whose listener the engine can advertise ({@link RdmxEndpoint#kindOf}: one reached through the IP
     * route, {@code tcp}, or one of the server's host only, {@code shm}).
     */
    static final String PROVIDER_KEY = "rdmx.rpc.hadoop.provider";
    /** The provider value for the usable IP-route provider of the highest rank ({@code tcp}): works across hosts. */
    static final String AUTO = "auto";
    /** The provider value for no rdmx listener: clients use TCP. */
    static final String OFF = "none";
    /** Default provider: {@value #AUTO}. */
    static final String PROVIDER_DEFAULT = AUTO;
    /** Server: rdmx handler threads, each waits for one Hadoop call; 0 means twice the server's Hadoop handlers. */
    static final String HANDLER_THREADS_KEY = "rdmx.rpc.hadoop.handlerThreads";
    /** Default: 0 (twice the Hadoop handler count, at least 4). */
    static final int HANDLER_THREADS_DEFAULT = 0;
    /** Client: how long a call waits when neither the proxy nor {@code ipc.client.rpc-timeout.ms} sets a bound. */
    static final String CALL_TIMEOUT_KEY = "rdmx.rpc.hadoop.callTimeoutMs";
    /** Default call bound: 120 s (Hadoop's default {@code ipc.client.rpc-timeout.ms}). */
    static final long CALL_TIMEOUT_DEFAULT_MS = 120_000;
    /** Client: after a server was found without an rdmx listener, how long its calls stay on TCP before a new probe. */
    static final String REPROBE_KEY = "rdmx.rpc.hadoop.reprobeMs";
    /** Default: 60 s. */
    static final long REPROBE_DEFAULT_MS = 60_000;

    /**
     * Server: how an rdmx call reaches the protocol: {@code queue} (Hadoop's call queue and handlers, with its
     * scheduler, back-off and {@code Server.get()}), {@code direct} (run on the rdmx handler thread as Hadoop's
     * handler would run it: no call-queue scheduling) or {@code reader} (run as {@code direct}, but on the rdmx
     * reader thread that decoded it: no thread hand-off on the server at all; for protocols whose calls are short
     * and never block, since a running call holds up every client's next request).
     */
    static final String DISPATCH_KEY = "rdmx.rpc.hadoop.dispatch";
    /** Default dispatch: queue. */
    static final String DISPATCH_DEFAULT = "queue";

    /**
     * Server: the capacity of each ring of the rdmx listener, advertised to clients (whose rings must match).
     * A message up to half of it goes in one piece, without waiting for the reader to free space.
     */
    static final String RING_BYTES_KEY = "rdmx.rpc.hadoop.ringBytes";
    /** Default: 2 MiB (requests and responses up to about 1 MiB go in one ring record). */
    static final int RING_BYTES_DEFAULT = 2 << 20;

    /**
     * Both sides: the rdmx cluster secret, read with {@link Configuration#getPassword}: from a credential store of
     * {@code hadoop.security.credential.provider.path} (alias {@code rdmx.secret}, e.g. in a jceks file made with
     * {@code hadoop credential create rdmx.secret -provider jceks://file/...}), else, where Hadoop allows clear-text
     * fallback, the key's value in the configuration. Unset: the node takes rdmx's own sources
     * ({@code RDMX_SECRET}, {@code rdmx.secretFile}, the system property).
     */
    static final String SECRET_KEY = "rdmx.secret";

    final String provider;
    /** The secret from the configuration, or null. */
    final String secret;
    /** Dispatch {@code direct} or {@code reader}: the call runs on an rdmx thread, not in Hadoop's call queue. */
    final boolean direct;
    /** Dispatch {@code reader}: on the rdmx reader thread. */
    final boolean onReader;
    final int ringBytes;
    final int handlerThreads;
    final Duration callTimeout;
    final Duration reprobe;
    final int maxDataLength;
    final int maxResponseLength;

    private HadoopRdmxConfig(Configuration conf) {
        provider = conf.getTrimmed(PROVIDER_KEY, PROVIDER_DEFAULT).toLowerCase(java.util.Locale.ROOT);
        if (!provider.equals(AUTO) && !provider.equals(OFF) && !advertisable().contains(provider)) {
            throw new IllegalArgumentException(PROVIDER_KEY + "=" + provider + " (expected " + AUTO + ", " + OFF
                + " or one of " + advertisable() + ")");
        }
        String d = conf.getTrimmed(DISPATCH_KEY, DISPATCH_DEFAULT).toLowerCase(java.util.Locale.ROOT);
        if (!d.equals("queue") && !d.equals("direct") && !d.equals("reader")) {
            throw new IllegalArgumentException(DISPATCH_KEY + "=" + d + " (expected queue, direct or reader)");
        }
        direct = !d.equals("queue");
        onReader = d.equals("reader");
        ringBytes = conf.getInt(RING_BYTES_KEY, RING_BYTES_DEFAULT);
        if (ringBytes < (64 << 10) || ringBytes > (1 << 30) || Integer.bitCount(ringBytes) != 1) {
            throw new IllegalArgumentException(RING_BYTES_KEY + "=" + ringBytes
                + " must be a power of two in [65536, 1073741824]");
        }
        handlerThreads = conf.getInt(HANDLER_THREADS_KEY, HANDLER_THREADS_DEFAULT);
        if (handlerThreads < 0 || handlerThreads > 1024) {
            throw new IllegalArgumentException(HANDLER_THREADS_KEY + "=" + handlerThreads + " out of range [0, 1024]");
        }
        long t = conf.getLong(CALL_TIMEOUT_KEY, CALL_TIMEOUT_DEFAULT_MS);
        if (t < 1) {
            throw new IllegalArgumentException(CALL_TIMEOUT_KEY + "=" + t + " must be >= 1");
        }
        callTimeout = Duration.ofMillis(t);
        long r = conf.getLong(REPROBE_KEY, REPROBE_DEFAULT_MS);
        if (r < 0) {
            throw new IllegalArgumentException(REPROBE_KEY + "=" + r + " must be >= 0");
        }
        reprobe = Duration.ofMillis(r);
        maxDataLength = conf.getInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH,
            CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH_DEFAULT);
        if (maxDataLength < 1) {
            throw new IllegalArgumentException(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH + "=" + maxDataLength
                + " must be >= 1");
        }
        maxResponseLength = conf.getInt(CommonConfigurationKeys.IPC_MAXIMUM_RESPONSE_LENGTH,
            CommonConfigurationKeys.IPC_MAXIMUM_RESPONSE_LENGTH_DEFAULT);
        secret = secret(conf);
    }

    /** @return the providers on the class path whose listener the engine can advertise */
    private static java.util.List<String> advertisable() {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (Fabric f : Fabrics.all()) {
            if (RdmxEndpoint.kindOf(f.traits()) != 0) {
                out.add(f.name());
            }
        }
        return out;
    }

    /**
     * @return the provider of the server's listener ({@value #AUTO}: the usable IP-route provider of the highest
     *     rank)
     * @throws RdmxException when {@value #AUTO} finds none
     */
    Fabric listenerFabric() throws RdmxException {
        if (!provider.equals(AUTO)) {
            return Fabrics.get(provider);
        }
        Fabric f = RdmxEndpoint.fabricOf(RdmxEndpoint.ROUTED);
        if (f == null) {
            throw new RdmxException(PROVIDER_KEY + "=" + AUTO + ": no usable provider reached through the IP route on"
                + " the class path (" + Fabrics.names() + ")");
        }
        return f;
    }

    private static String secret(Configuration conf) {
        char[] s;
        try {
            s = conf.getPassword(SECRET_KEY);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(SECRET_KEY + " could not be read from the credential providers ("
                + org.apache.hadoop.security.alias.CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH + "="
                + conf.get(org.apache.hadoop.security.alias.CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH)
                + "): " + e.getMessage(), e);
        }
        if (s == null) {
            return null;
        }
        String v = new String(s).trim();
        java.util.Arrays.fill(s, '\0');
        if (v.isEmpty()) {
            throw new IllegalArgumentException(SECRET_KEY + " is set but empty");
        }
        return v;
    }

    /**
     * @return a digest naming the secret among the JVM's shared clients (never the secret itself), or "none"
     */
    String secretId() {
        if (secret == null) {
            return "none";
        }
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(
                secret.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static HadoopRdmxConfig of(Configuration conf) {
        return new HadoopRdmxConfig(conf);
    }

    /** @return the client's rdmx message bound: a response larger than Hadoop's response limit is refused */
    int clientMaxMessage() {
        return maxResponseLength > 0 ? Math.max(maxResponseLength, maxDataLength) : Integer.MAX_VALUE - 16;
    }
}
