package io.rdmx.bench.rpc;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoResponseProto;
import org.apache.hadoop.thirdparty.protobuf.CodedInputStream;
import org.apache.hadoop.thirdparty.protobuf.CodedOutputStream;

/**
 * The per-call floor of {@code bench rpc}'s echo, whatever the engine and transport: what both RdmxRpcEngine and
 * ProtobufRpcEngine2 do to every call in one JVM (run it on the benchmark's JDK 17 with the Hadoop class path):
 * serialize the client's {@code EchoRequestProto} (a protobuf string of the payload size), parse it on the server
 * and {@code getMessage()}, build and serialize the {@code EchoResponseProto}, parse it on the client and
 * {@code getMessage()}. Each step is timed alone (mean of the second half of the iterations, us), and so are the
 * steps the engines do differently: serializing through an {@code OutputStream} ({@code writeDelimitedTo}, as the
 * rdmx client did and Hadoop's own client does) against into an array of the exact size, and one copy of the
 * serialized bytes (what each copy on the data path costs).
 *
 * <p>{@code java -cp benchmarks.jar:$(cat bench/target/hadoop.classpath) io.rdmx.bench.rpc.RpcFloor [iterations]
 * [sizes]}
 */
public final class RpcFloor {
    private static long sink;

    private RpcFloor() {
    }

    /** A timed step. */
    private interface Step {
        void run() throws Exception;
    }

    /**
     * @param args iterations per size (default 2000), payload sizes (comma list, default 1024,262144,524288)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int[] sizes = Arrays.stream((args.length > 1 ? args[1] : "1024,262144,524288").split(","))
            .mapToInt(Integer::parseInt).toArray();
        System.out.println("java " + Runtime.version() + ", " + iterations + " iterations per step, mean of the"
            + " second half (us)");
        for (int size : sizes) {
            EchoRequestProto req = EchoRequestProto.newBuilder().setMessage("x".repeat(size)).build();
            byte[] reqBytes = toArray(req);
            EchoRequestProto parsed = EchoRequestProto.parseFrom(reqBytes);
            String s = parsed.getMessage();
            EchoResponseProto resp = EchoResponseProto.newBuilder().setMessage(s).build();
            byte[] respBytes = toArray(resp);
            byte[] copy = new byte[reqBytes.length];
            double[] t = new double[8];
            t[0] = time(iterations, () -> sink += toArray(req).length);
            t[1] = time(iterations, () -> sink += toStream(req).length);
            t[2] = time(iterations, () -> sink += EchoRequestProto.parseFrom(reqBytes).getMessage().length());
            t[3] = time(iterations, () -> sink += EchoRequestProto.parseFrom(CodedInputStream.newInstance(
                ByteBuffer.wrap(reqBytes))).getMessage().length());
            t[4] = time(iterations, () -> sink += toArray(EchoResponseProto.newBuilder().setMessage(s).build()).length);
            t[5] = time(iterations, () -> sink += EchoResponseProto.parseFrom(respBytes).getMessage().length());
            t[6] = time(iterations, () -> {
                System.arraycopy(reqBytes, 0, copy, 0, reqBytes.length);
                sink += copy[size / 2];
            });
            t[7] = time(iterations, () -> {
                byte[] a = toArray(req);
                String m = EchoRequestProto.parseFrom(a).getMessage();
                byte[] b = toArray(EchoResponseProto.newBuilder().setMessage(m).build());
                sink += EchoResponseProto.parseFrom(b).getMessage().length();
            });
            System.out.printf(Locale.ROOT, "%7d B: request serialize %.1f (via OutputStream %.1f), parse+getMessage"
                    + " %.1f (from ByteBuffer %.1f); response build+serialize %.1f, parse+getMessage %.1f; one copy"
                    + " %.1f; whole floor %.1f us%n", size, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
        }
        System.out.println(sink == 42 ? "" : "ok");
    }

    private static byte[] toArray(org.apache.hadoop.thirdparty.protobuf.Message m) throws Exception {
        byte[] b = new byte[m.getSerializedSize()];
        CodedOutputStream out = CodedOutputStream.newInstance(b);
        m.writeTo(out);
        out.checkNoSpaceLeft();
        return b;
    }

    private static byte[] toStream(org.apache.hadoop.thirdparty.protobuf.Message m) throws Exception {
        ByteArrayOutputStream o = new ByteArrayOutputStream(m.getSerializedSize() + 8);
        m.writeTo(o);
        return o.toByteArray();
    }

    private static double time(int iterations, Step s) throws Exception {
        long total = 0;
        for (int i = 0; i < iterations; i++) {
            long t = System.nanoTime();
            s.run();
            if (i >= iterations / 2) {
                total += System.nanoTime() - t;
            }
        }
        return total / 1000.0 / (iterations - iterations / 2);
    }
}
