package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server's dispatch table alone: which handler a method gets, where it runs, and what is answered for it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DispatchTableTest {
    /** What the handlers' calls were answered with, in order. */
    private final List<String> answers = new ArrayList<>();
    private final Answerer answerer = new Answerer() {
        @Override
        public boolean answer(RpcCall call, int kind, ByteBuffer buffer, RpcBody body) {
            answers.add(RpcFrameDescriptor.kindName(kind) + " id=" + call.callId() + " "
                + (buffer == null ? "null" : StandardCharsets.UTF_8.decode(buffer.duplicate())));
            return true;
        }

        @Override
        public boolean answerError(RpcCall call, String className, String message) {
            answers.add("ERROR id=" + call.callId() + " " + className + ": " + message);
            return true;
        }
    };

    private RpcCall call(DispatchTable t, int method, long callId, String body) {
        return new RpcCall(answerer, "client-c", null, null, method, callId, 1, 2,
            body.getBytes(StandardCharsets.UTF_8), t.route(method));
    }

    @Test
    void anUnknownMethodWithoutFallbackIsAnsweredWithAnErrorNamingItAndTheServer() {
        DispatchTable t = new DispatchTable.Builder("server-s").handle(1, RpcCall::request).build();
        assertEquals(DispatchTable.Mode.NONE, t.route(42).mode);
        call(t, 42, 7, "x").run();
        assertEquals(List.of("ERROR id=7 java.lang.UnsupportedOperationException: no handler for method=42 on"
            + " server 'server-s'"), answers);
    }

    @Test
    void theFallbackServesEveryMethodWithoutAHandlerOfItsOwn() {
        DispatchTable t = new DispatchTable.Builder("server-s").handle(1, c -> ByteBuffer.wrap("one".getBytes(
            StandardCharsets.UTF_8))).fallback(c -> ByteBuffer.wrap(("fallback " + c.method()).getBytes(
            StandardCharsets.UTF_8))).build();
        call(t, 1, 1, "").run();
        call(t, 9, 2, "").run();
        assertEquals(List.of("RESPONSE id=1 one", "RESPONSE id=2 fallback 9"), answers);
    }

    @Test
    void aMethodHasOneHandlerWhateverItsKind() {
        DispatchTable.Builder b = new DispatchTable.Builder("server-s").handle(3, RpcCall::request);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> b.handleAsync(3, c -> c.respond((ByteBuffer) null), true));
        assertEquals("method=3 has a handler already", e.getMessage());
        b.handleAsync(4, c -> c.respond((ByteBuffer) null), false);
        assertThrows(IllegalArgumentException.class, () -> b.handle(4, RpcCall::request));
        DispatchTable t = b.handleAsync(5, c -> c.respond((ByteBuffer) null), true).build();
        assertEquals(DispatchTable.Mode.BLOCKING, t.route(3).mode);
        assertEquals(DispatchTable.Mode.ASYNC, t.route(4).mode);
        assertEquals(DispatchTable.Mode.ON_READER, t.route(5).mode);
    }

    @Test
    void aHandlerThatThrowsIsAnsweredWithItsClassAndMessageAndAnErrorOfTheJvmGoesOnUpOnceAnswered() {
        DispatchTable t = new DispatchTable.Builder("server-s")
            .handle(1, c -> {
                throw new AssertionError("assert " + c.callId());
            })
            .handle(2, c -> {
                throw new OutOfMemoryError("oom " + c.callId());
            }).build();
        call(t, 1, 11, "").run();
        OutOfMemoryError oom = assertThrows(OutOfMemoryError.class, () -> call(t, 2, 12, "").run());
        assertEquals("oom 12", oom.getMessage());
        assertEquals(List.of("ERROR id=11 java.lang.AssertionError: assert 11",
            "ERROR id=12 java.lang.OutOfMemoryError: oom 12"), answers);
    }

    @Test
    void anAsynchronousHandlerThatAnsweredAndThenThrewIsNotAnsweredTwice() {
        DispatchTable t = new DispatchTable.Builder("server-s")
            .handleAsync(1, c -> {
                c.respond(ByteBuffer.wrap("early".getBytes(StandardCharsets.UTF_8)));
                throw new IllegalStateException("after answering");
            }, false)
            .handleAsync(2, c -> {
                throw new IllegalStateException("before answering " + c.callId());
            }, true).build();
        RpcCall answered = call(t, 1, 21, "");
        answered.run();
        call(t, 2, 22, "").run();
        assertEquals(List.of("RESPONSE id=21 early", "ERROR id=22 java.lang.IllegalStateException: before answering"
            + " 22"), answers);
        assertTrue(answered.isAnswered());
    }

    @Test
    void aBlockingHandlersReturnValueIsItsAnswerAndTheRouteIsTheCallsOwn() {
        DispatchTable t = new DispatchTable.Builder("server-s").handle(1, RpcCall::request).build();
        RpcCall c = call(t, 1, 31, "echo");
        assertSame(t.route(1), c.route());
        c.run();
        assertEquals(List.of("RESPONSE id=31 echo"), answers);
        assertThrows(IllegalStateException.class, () -> c.respond((ByteBuffer) null), "answered once");
    }
}
