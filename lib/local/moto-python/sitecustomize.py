"""Serializes DynamoDB requests inside the local moto_server (loaded by lib/local/moto.ts).

moto_server answers requests on threads, and its DynamoDB backend is not
thread-safe: a condition is checked and the write applied without a lock, and
a cancelled TransactWriteItems restores a deep copy of the whole table taken
when it began, erasing writes that other requests committed meanwhile. Real
DynamoDB applies conditional writes and transactions atomically, and the
platform's uniqueness, counter and single-use rules rely on that, so their race
tests would otherwise fail (or pass) by luck. Only DynamoDB calls take the lock:
other services keep answering in parallel (SQS long polls would stall everything).

Python imports `sitecustomize` at start-up from PYTHONPATH; this one acts only
when SLIPWAY_MOTO_SERIALIZE_DYNAMODB=1, which moto.ts sets for its child alone.
"""

import os

if os.environ.get("SLIPWAY_MOTO_SERIALIZE_DYNAMODB") == "1":
    import threading

    import werkzeug.serving as _serving

    _run_simple = _serving.run_simple
    _dynamodb_lock = threading.Lock()

    def _serialize_dynamodb(app):
        def application(environ, start_response):
            if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
                with _dynamodb_lock:
                    # Produce the whole body under the lock: a WSGI app may do its work lazily.
                    return list(app(environ, start_response))
            return app(environ, start_response)

        return application

    def run_simple(hostname, port, application, *args, **kwargs):
        return _run_simple(hostname, port, _serialize_dynamodb(application), *args, **kwargs)

    _serving.run_simple = run_simple
