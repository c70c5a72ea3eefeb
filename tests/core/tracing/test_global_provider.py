"""Tracing into the app's own global tracer provider, and flushing a batching one."""

import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import neta
import neta.tracing
from tests.core.runtime import kit
from tests.core.tracing.test_off import run_python


def test_enable_without_a_provider_traces_into_the_global_one_even_when_set_later():
    code = """
        import asyncio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        import neta
        import neta.tracing
        from tests.core.runtime import kit

        neta.tracing.enable()  # before the app sets its provider
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
        agent = neta.Agent(provider=neta.ScriptedProvider([{"text": "hi"}]), plugin_manager=pm)
        with trace.get_tracer("app").start_as_current_span("request"):
            asyncio.run(agent.run("go"))
        spans = {span.name: span for span in exporter.get_finished_spans()}
        print(sorted(spans))
        print(spans["invoke_agent"].parent.span_id == spans["request"].context.span_id)
    """
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    names, under_the_request = done.stdout.splitlines()
    assert names == "['chat', 'invoke_agent', 'request']"
    assert under_the_request == "True"  # the app's span is the run's parent


def test_flush_sends_what_a_batching_provider_still_holds(tmp_path):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    neta.tracing.enable(provider)
    try:
        pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
        agent = neta.Agent(
            provider=neta.ScriptedProvider([{"text": "hi"}]), plugin_manager=pm, workspace=tmp_path
        )
        asyncio.run(agent.run("go"))
        assert exporter.get_finished_spans() == ()  # held for the next batch
        assert neta.tracing.flush()
        assert len(exporter.get_finished_spans()) == 2
    finally:
        neta.tracing.disable()
        provider.shutdown()
    assert neta.tracing.flush()  # tracing off: nothing to send
