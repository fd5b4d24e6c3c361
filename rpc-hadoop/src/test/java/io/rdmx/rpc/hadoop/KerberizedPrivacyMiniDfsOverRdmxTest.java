package io.rdmx.rpc.hadoop;

import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * {@link KerberizedMiniDfsOverRdmxTest} with {@code hadoop.rpc.protection=privacy}: the NameNode's client calls go
 * over rdmx with each call and answer wrapped (encrypted) by the negotiated SASL QOP {@code auth-conf}, checked per
 * operation through the engine's count of wrapped calls.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
class KerberizedPrivacyMiniDfsOverRdmxTest extends KerberizedMiniDfsOverRdmxTest {
    @Override
    String protection() {
        return "privacy";
    }
}
