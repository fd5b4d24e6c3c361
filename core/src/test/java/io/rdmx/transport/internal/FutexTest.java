package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Futexes: a sleeper on a word returns when another thread, or another process mapping the same file, changes
 * the word and wakes it; at once when a word already differs. Every sleep here is an hour long and the test's
 * own timeout is what fails a lost wake-up. On Java 17 only the absence is checked.
 */
@Timeout(60)
class FutexTest {
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class,
        ByteOrder.nativeOrder());
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    private static boolean expected() {
        return Runtime.version().feature() >= 22
            && System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
            && Futex.syscallNumber() >= 0 && Boolean.parseBoolean(System.getProperty(Futex.PROPERTY, "true"));
    }

    @Test
    void presentExactlyWhereItCanBe() {
        if (expected()) {
            assertNotNull(Futex.get(), "Java " + Runtime.version().feature() + " on Linux "
                + System.getProperty("os.arch") + ": futexes expected (kernel " + System.getProperty("os.version")
                + ")");
        } else {
            assertNull(Futex.get());
        }
    }

    @Test
    void aSleeperIsWokenByAnotherThread() throws Exception {
        Futex f = present();
        ByteBuffer word = ByteBuffer.allocateDirect(64);
        long address = f.address(word, 8);
        INTS.setVolatile(word, 8, 1);
        CountDownLatch asleep = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            Futex.WaitSet set = f.newWaitSet(1);
            set.set(0, address, 1);
            asleep.countDown();
            while ((int) INTS.getVolatile(word, 8) == 1) {
                set.await(1, HOUR);
            }
        });
        t.start();
        asleep.await();
        INTS.setVolatile(word, 8, 0);
        f.wake(address);
        t.join();
        assertEquals(0, (int) INTS.getVolatile(word, 8));
    }

    @Test
    void aWordThatAlreadyDiffersEndsTheSleepAtOnce() {
        Futex f = present();
        ByteBuffer words = ByteBuffer.allocateDirect(64);
        Futex.WaitSet set = f.newWaitSet(3);
        set.set(0, f.address(words, 0), 0);
        set.set(1, f.address(words, 4), 0);
        set.set(2, f.address(words, 8), 7); // holds 0, expected 7: no sleep
        set.await(3, HOUR);
        set.await(1, 1_000); // a timeout ends a sleep on a word that holds its value
    }

    @Test
    void badArgumentsAreRefusedWithTheValue() {
        Futex f = present();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> f.address(ByteBuffer.allocate(64), 0));
        assertTrue(e.getMessage().contains("direct"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> f.address(ByteBuffer.allocateDirect(64), 6));
        assertTrue(e.getMessage().contains("index=6"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> f.address(ByteBuffer.allocateDirect(64), 64));
        assertTrue(e.getMessage().contains("capacity=64"), e.getMessage());
        Futex.WaitSet set = f.newWaitSet(2);
        e = assertThrows(IllegalArgumentException.class, () -> set.await(3, 1));
        assertTrue(e.getMessage().contains("n=3"), e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> set.set(2, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> f.newWaitSet(0));
    }

    /**
     * The point of futexes in rdmx: a process sleeping on a word of a shared file mapping is woken by another
     * process that maps the same file, with no socket or thread between them.
     */
    @Test
    void aSleeperInAnotherProcessIsWokenThroughTheSharedMapping(@TempDir Path dir) throws Exception {
        Futex f = present();
        Path file = dir.resolve("words");
        MappedByteBuffer m = map(file);
        INTS.setVolatile(m, 0, 1); // the child sleeps while this holds 1
        Process child = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            Child.class.getName(), file.toString()).redirectErrorStream(true).start();
        // the child says it is about to sleep by storing 2 at offset 4
        while ((int) INTS.getVolatile(m, 4) != 2) {
            assertTrue(child.isAlive(), () -> "child died: " + output(child));
            Thread.onSpinWait();
        }
        INTS.setVolatile(m, 0, 0);
        f.wake(f.address(m, 0));
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child was not woken through the shared mapping");
        assertEquals(0, child.exitValue(), output(child));
        assertEquals(3, (int) INTS.getVolatile(m, 4), "the child saw the word change");
    }

    private static String output(Process p) {
        try {
            return new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static MappedByteBuffer map(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            if (ch.size() < 64) {
                ch.write(ByteBuffer.allocate(64), 0);
            }
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, 64);
        }
    }

    private static Futex present() {
        assumeTrue(Futex.get() != null, "no futexes on this JVM/platform");
        return Futex.get();
    }

    /** The other process: sleeps on word 0 of the file while it holds 1, with hour-long sleeps. */
    public static final class Child {
        private Child() {
        }

        /**
         * @param args the file
         * @throws IOException if the file cannot be mapped
         */
        public static void main(String[] args) throws IOException {
            Futex f = Futex.get();
            if (f == null) {
                System.exit(2);
            }
            MappedByteBuffer m = map(Paths.get(args[0]));
            Futex.WaitSet set = f.newWaitSet(1);
            set.set(0, f.address(m, 0), 1);
            INTS.setVolatile(m, 4, 2);
            while ((int) INTS.getVolatile(m, 0) == 1) {
                set.await(1, HOUR);
            }
            INTS.setVolatile(m, 4, 3);
            System.exit(0);
        }
    }
}
