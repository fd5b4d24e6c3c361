package io.rdmx.channel;

import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;

/** {@link AgentEngineTest} on tcp. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpAgentEngineTest extends AgentEngineTest {
    /** @return tcp */
    static Stream<String> providers() {
        return Stream.of("tcp");
    }

    /** @return tcp */
    static Stream<String> socketProviders() {
        return Stream.of("tcp");
    }
}
