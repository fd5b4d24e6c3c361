package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.PartialFunction;
import scala.runtime.BoxedUnit;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AddressBookTest {
    /** Executor 1 on 10.0.0.1, executor 2 on 10.0.0.2 (address literals: no name look-up). */
    private static final Map<String, String> HOSTS = Map.of("1", "10.0.0.1", "2", "10.0.0.2");
    private static final RpcAddress FROM_1 = new RpcAddress("10.0.0.1", 40001);
    private static final RpcAddress FROM_2 = new RpcAddress("10.0.0.2", 40002);
    private static final String AD_1 = "shm=/x\ntcp=10.0.0.1:5";

    private static AddressBook.Driver book() {
        return new AddressBook.Driver(null, HOSTS::get, AddressBook::sameHost);
    }

    @Test
    void registrationAndLookUpAreStrings() {
        AddressBook.Driver d = book();
        assertEquals("", d.handle("L\n1", FROM_2), "an executor that never registered");
        assertEquals("ok", d.handle("R\n1\n10.0.0.1\n" + AD_1, FROM_1));
        assertEquals("10.0.0.1\n" + AD_1, d.handle("L\n1", FROM_2));
        assertEquals("10.0.0.1\n" + AD_1, d.lookup("1"));
        assertNull(d.lookup("2"));
        assertThrows(IllegalArgumentException.class, () -> d.handle("R\n1", FROM_1));
        assertThrows(IllegalArgumentException.class, () -> d.handle("R\n1\n10.0.0.1", FROM_1));
        assertEquals("ok", d.handle("R\n1\n10.0.0.1\ntcp=10.0.0.1:6", FROM_1), "again from the same sender");
        assertEquals("10.0.0.1\ntcp=10.0.0.1:6", d.lookup("1"));
    }

    /**
     * Executor 2 registers its own addresses under executor 1's name (which would send 1's readers to it), before
     * and after 1 registered: refused, naming executor, sender and the host the driver knows; 1's entry stands.
     */
    @Test
    void aRegistrationNamingAnotherExecutorIsRefused() {
        AddressBook.Driver d = book();
        String forged = "R\n1\n10.0.0.1\ntcp=10.0.0.2:7";
        SecurityException e = assertThrows(SecurityException.class, () -> d.handle(forged, FROM_2));
        assertEquals("rdmx address book refused the registration of executor 1 (host=10.0.0.1) from "
            + FROM_2 + ": the sender is not on the executor's host=10.0.0.1", e.getMessage());
        assertNull(d.lookup("1"));
        d.handle("R\n1\n10.0.0.1\n" + AD_1, FROM_1);
        assertThrows(SecurityException.class, () -> d.handle(forged, FROM_2));
        // claiming executor 1's name with its own host, or from 1's host but another connection
        e = assertThrows(SecurityException.class, () -> d.handle("R\n1\n10.0.0.2\ntcp=10.0.0.2:7", FROM_2));
        assertTrue(e.getMessage().endsWith("its block manager is on host=10.0.0.1"), e.getMessage());
        e = assertThrows(SecurityException.class, () -> d.handle(forged, new RpcAddress("10.0.0.1", 50000)));
        assertTrue(e.getMessage().endsWith("it registered from " + FROM_1 + " already"), e.getMessage());
        e = assertThrows(SecurityException.class, () -> d.handle("R\n9\n10.0.0.2\ntcp=10.0.0.2:7", FROM_2));
        assertTrue(e.getMessage().endsWith("no live executor of this application has that id"), e.getMessage());
        assertEquals("10.0.0.1\n" + AD_1, d.lookup("1"), "executor 1's entry stands");
    }

    /** The refusal travels back to the sender through Spark's RPC context, whose sender address is checked. */
    @Test
    void theSenderIsTakenFromSparksRpcContext() {
        AddressBook.Driver d = book();
        Context from2 = new Context(FROM_2);
        PartialFunction<Object, BoxedUnit> f = d.receiveAndReply(from2);
        f.apply("R\n1\n10.0.0.1\ntcp=10.0.0.2:7");
        assertEquals(List.of(), from2.replies);
        assertTrue(from2.failures.get(0) instanceof SecurityException, from2.failures::toString);
        Context from1 = new Context(FROM_1);
        d.receiveAndReply(from1).apply("R\n1\n10.0.0.1\n" + AD_1);
        assertEquals(List.of("ok"), from1.replies);
    }

    @Test
    void aLostExecutorsEntryIsGoneAndItCannotRegisterAgain() {
        AddressBook.Driver d = book();
        d.handle("R\n1\n10.0.0.1\n" + AD_1, FROM_1);
        d.handle("R\n2\n10.0.0.2\ntcp=10.0.0.2:7", FROM_2);
        new AddressBook.Lost(d).onExecutorRemoved(new SparkListenerExecutorRemoved(0L, "1", "killed"));
        assertNull(d.lookup("1"));
        assertEquals("", d.handle("L\n1", FROM_2));
        SecurityException e = assertThrows(SecurityException.class, () -> d.handle("R\n1\n10.0.0.1\n" + AD_1,
            FROM_1));
        assertTrue(e.getMessage().endsWith("that executor was removed"), e.getMessage());
        assertEquals("10.0.0.2\ntcp=10.0.0.2:7", d.lookup("2"), "the others stay");
    }

    @Test
    void aSenderIsOnAHostByNameByAddressOrOverLoopbackOnThisMachine() {
        assertTrue(AddressBook.sameHost("10.0.0.1", "10.0.0.1"));
        assertTrue(AddressBook.sameHost("localhost", "127.0.0.1"));
        assertTrue(AddressBook.sameHost("127.0.0.1", "127.0.0.1"));
        assertTrue(!AddressBook.sameHost("10.0.0.1", "10.0.0.2"));
        assertTrue(!AddressBook.sameHost("10.0.0.1", "127.0.0.1"), "loopback is this machine, not 10.0.0.1");
        assertTrue(!AddressBook.sameHost("no-such-host.invalid", "10.0.0.2"));
    }

    /** Spark's RPC context of one message. */
    private static final class Context implements RpcCallContext {
        final RpcAddress sender;
        final List<Object> replies = new ArrayList<>();
        final List<Throwable> failures = new ArrayList<>();

        Context(RpcAddress sender) {
            this.sender = sender;
        }

        @Override
        public void reply(Object response) {
            replies.add(response);
        }

        @Override
        public void sendFailure(Throwable e) {
            failures.add(e);
        }

        @Override
        public RpcAddress senderAddress() {
            return sender;
        }
    }
}
