package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A region's registrations per queue pair's protection domain, on a fake provider whose registrations are strings
 * naming the domain and the access: a key with remote access exists only in the domains whose peers may use it.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class QpRegistrationsTest {
    private final List<String> log = new ArrayList<>();

    private final class Fake extends QpRegistrations<String, String> {
        Fake(int access, String grantee) {
            super(access, grantee);
        }

        @Override
        protected String register(String domain, int access) {
            String mr = domain + (access == Access.ALL ? ":remote" : ":local");
            log.add("register " + mr);
            return mr;
        }

        @Override
        protected void deregister(String mr) {
            log.add("deregister " + mr);
        }

        @Override
        protected void forgotten(String domain) {
            log.add("forgotten " + domain);
        }

        @Override
        protected String describe() {
            return "fake region";
        }
    }

    @Test
    void aGrantedRegionHasRemoteAccessInItsGranteesDomainAlone() throws Exception {
        Fake r = new Fake(Access.ALL, "qp1");
        assertEquals("qp1:remote", r.in("qp1"));
        assertEquals("qp2:local", r.in("qp2"), "used on another connection it is a local source only");
    }

    @Test
    void anExportedRegionHasRemoteAccessInEveryDomainAndALocalOneInNone() throws Exception {
        Fake exported = new Fake(Access.ALL, null);
        assertEquals("qp1:remote", exported.in("qp1"));
        assertEquals("qp2:remote", exported.in("qp2"));
        Fake local = new Fake(Access.LOCAL_WRITE, null);
        assertEquals("qp1:local", local.in("qp1"));
    }

    @Test
    void aDomainIsRegisteredOnceAndDroppedAtItsTeardown() throws Exception {
        Fake r = new Fake(Access.ALL, null);
        assertSame(r.in("qp1"), r.in("qp1"));
        assertEquals(1, r.domains());
        r.drop("qp1");
        assertEquals(0, r.domains());
        assertEquals(List.of("register qp1:remote", "deregister qp1:remote"), log);
    }

    @Test
    void theReleaseDeregistersEveryDomainTellsThemAndRefusesLaterUse() throws Exception {
        Fake r = new Fake(Access.ALL, null);
        r.in("qp1");
        r.in("qp2");
        log.clear();
        r.release();
        assertTrue(log.containsAll(List.of("deregister qp1:remote", "deregister qp2:remote", "forgotten qp1",
            "forgotten qp2")), log.toString());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> r.in("qp3"));
        assertEquals("fake region is released", e.getMessage());
    }
}
