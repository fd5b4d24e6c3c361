package io.rdmx.spark;

import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import scala.Option;

/**
 * Spark's network security settings as rdmx carries them, read once when the manager starts.
 *
 * <ul>
 *   <li>{@value #AUTHENTICATE_KEY}{@code =true}: every rdmx node of the application (block servers and fetch
 *       clients, on every provider) takes the application's secret from Spark's {@link SecurityManager}
 *       ({@code getSecretKey()}) as its cluster secret ({@code NodeOptions.secret}, in code: never a system
 *       property or a command line), so a peer of another application, or without the secret, is refused at the
 *       handshake and gets nothing. Off, the nodes take rdmx's own secret settings, as before.</li>
 *   <li>rdmx does not encrypt the blocks it carries: with Spark's network encryption asked for
 *       ({@value #CRYPTO_KEY}, {@value #SASL_ENCRYPTION_KEY} or TLS for RPC, {@value #SSL_RPC_KEY}) the manager
 *       refuses to start ({@link #check}), naming the setting and the alternatives, instead of carrying plaintext
 *       where encryption was asked for.</li>
 *   <li>{@code spark.io.encryption.enabled} needs nothing here: the map side writes encrypted files, the servers
 *       send their bytes as they are, and the reader decrypts ({@code SerializerManager.wrapStream}).</li>
 * </ul>
 */
final class SparkSecurity {
    /** Spark's authentication switch. */
    static final String AUTHENTICATE_KEY = "spark.authenticate";
    /** Spark's AES-based network encryption (needs authentication). */
    static final String CRYPTO_KEY = "spark.network.crypto.enabled";
    /** Spark's older SASL encryption of the block transfer service. */
    static final String SASL_ENCRYPTION_KEY = "spark.authenticate.enableSaslEncryption";
    /** TLS for Spark's RPC and block transfer (Spark 4; defaults to {@code spark.ssl.enabled}). */
    static final String SSL_RPC_KEY = "spark.ssl.rpc.enabled";

    private final String secret;

    private SparkSecurity(String secret) {
        this.secret = secret;
    }

    /**
     * Reads the settings from the process's {@link SecurityManager} (the {@link SparkEnv}'s: Spark makes it before
     * the shuffle manager), or from one made of {@code conf} when there is no environment yet.
     *
     * @param conf the application's configuration
     * @return the settings
     * @throws IllegalStateException if Spark's network encryption is on (naming the setting)
     * @throws IllegalArgumentException if authentication is on and Spark has no secret (Spark's own message)
     */
    static SparkSecurity from(SparkConf conf) {
        SparkEnv env = SparkEnv.get();
        SecurityManager sm = env != null ? env.securityManager()
            : new SecurityManager(conf, Option.empty(), SecurityManager.$lessinit$greater$default$3());
        check(sm.isEncryptionEnabled(), conf.getBoolean(CRYPTO_KEY, false), sm.isSslRpcEnabled());
        return new SparkSecurity(sm.isAuthenticationEnabled() ? sm.getSecretKey() : null);
    }

    /**
     * Refuses Spark's network encryption, which rdmx does not provide.
     *
     * @param encryption Spark's {@code SecurityManager.isEncryptionEnabled()}: AES or SASL encryption asked for
     * @param crypto whether it is {@value #CRYPTO_KEY} (else {@value #SASL_ENCRYPTION_KEY})
     * @param sslRpc Spark's {@code SecurityManager.isSslRpcEnabled()}
     * @throws IllegalStateException naming the setting and what to do instead
     */
    static void check(boolean encryption, boolean crypto, boolean sslRpc) {
        String key = encryption ? (crypto ? CRYPTO_KEY : SASL_ENCRYPTION_KEY) : sslRpc ? SSL_RPC_KEY : null;
        if (key == null) {
            return;
        }
        throw new IllegalStateException("rdmx shuffle: " + key + "=true asks Spark to encrypt what crosses the "
            + "network, and rdmx does not encrypt the shuffle blocks it carries; it refuses to start rather than "
            + "send them in the clear. Either set " + key + "=false to use rdmx with authentication only ("
            + AUTHENTICATE_KEY + "=true; with spark.io.encryption.enabled=true the blocks stay encrypted at rest and "
            + "in flight, as they are written), or use Spark's sort shuffle manager (spark.shuffle.manager=sort)");
    }

    /** @return the application's secret for every rdmx node, or null when {@value #AUTHENTICATE_KEY} is off */
    String secret() {
        return secret;
    }

    @Override
    public String toString() {
        return "SparkSecurity{" + AUTHENTICATE_KEY + "=" + (secret != null) + "}";
    }
}
