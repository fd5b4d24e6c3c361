package io.rdmx.transport.testsuite;

import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;

/** {@link TwoProcessTest} on tcp. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpTwoProcessTest extends TwoProcessTest {
    /** @return tcp */
    static Stream<String> providers() {
        return Stream.of("tcp");
    }
}
