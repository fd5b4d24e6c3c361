package io.rdmx.disni;

import io.rdmx.transport.NodeOptions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite on DiSNI with a cluster secret on every node: every connection of the suite runs the
 * setup's challenge-response (HELLO, CHALLENGE, PROVE, ACCEPT) first.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisniSecretConformanceTest extends DisniConformanceTest {
    @Override
    protected NodeOptions.Builder options(String name) {
        return super.options(name).secret("conformance-secret");
    }
}
