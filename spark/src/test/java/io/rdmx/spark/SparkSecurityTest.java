package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SparkSecurityTest {
    private static SparkConf conf(String... kv) {
        SparkConf c = new SparkConf(false).set("spark.master", "local-cluster[2,1,1024]").set("spark.app.name", "t");
        for (int i = 0; i < kv.length; i += 2) {
            c.set(kv[i], kv[i + 1]);
        }
        return c;
    }

    @Test
    void withSparkAuthenticateEveryNodeTakesTheApplicationsSecret() {
        SparkSecurity s = SparkSecurity.from(conf("spark.authenticate", "true", "spark.authenticate.secret",
            "the-app-secret"));
        assertEquals("the-app-secret", s.secret());
        assertTrue(!s.toString().contains("the-app-secret"), s::toString);
    }

    @Test
    void withoutItTheNodesKeepRdmxsOwnSecretSettings() {
        assertNull(SparkSecurity.from(conf()).secret());
        assertNull(SparkSecurity.from(conf("spark.authenticate", "false", "spark.authenticate.secret", "x")).secret());
    }

    /**
     * Spark's network encryption is refused, never carried in the clear: the error names the setting and the ways
     * out.
     */
    @Test
    void networkEncryptionIsRefusedNamingTheSettingAndTheAlternatives() {
        for (List<String> kv : List.of(List.of("spark.network.crypto.enabled", "true"),
            List.of("spark.authenticate.enableSaslEncryption", "true"))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> SparkSecurity.from(conf(
                "spark.authenticate", "true", "spark.authenticate.secret", "s", kv.get(0), kv.get(1))));
            assertTrue(e.getMessage().contains(kv.get(0) + "=true"), e.getMessage());
            assertTrue(e.getMessage().contains("set " + kv.get(0) + "=false to use rdmx with authentication only"),
                e.getMessage());
            assertTrue(e.getMessage().contains("spark.shuffle.manager=sort"), e.getMessage());
        }
        IllegalStateException tls = assertThrows(IllegalStateException.class, () -> SparkSecurity.check(false, false,
            true));
        assertTrue(tls.getMessage().contains("spark.ssl.rpc.enabled=true"), tls.getMessage());
        SparkSecurity.check(false, false, false);
    }

    /** The manager itself refuses to start (Spark then fails the SparkContext or the executor with this message). */
    @Test
    void theManagerRefusesToStartWithNetworkEncryption() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new RdmxShuffleManager(conf(
            "spark.authenticate", "true", "spark.authenticate.secret", "s", "spark.network.crypto.enabled", "true"),
            true));
        assertTrue(e.getMessage().contains("spark.network.crypto.enabled=true"), e.getMessage());
    }
}
