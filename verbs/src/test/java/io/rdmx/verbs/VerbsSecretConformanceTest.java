package io.rdmx.verbs;

import io.rdmx.transport.NodeOptions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite on real verbs with a cluster secret on every node: every connection of the suite runs the
 * setup's challenge-response (HELLO, CHALLENGE, PROVE, ACCEPT) first.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerbsSecretConformanceTest extends VerbsConformanceTest {
    @Override
    protected NodeOptions.Builder options(String name) {
        return super.options(name).secret("conformance-secret");
    }
}
