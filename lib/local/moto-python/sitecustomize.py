"""Serializes DynamoDB requests inside the local moto_server, makes its transactions
roll back item by item and its Query read one partition, and spares its dispatcher
a folder listing per request (loaded by lib/local/moto.ts).

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

    def _without_flask(app):
        """Answers DynamoDB and SQS calls with moto's own handlers, without the flask app moto_server wraps them in.

        moto_server routes every request through its domain dispatcher (which parses the signature to find the
        service), then a flask app per service: a request context, CORS and flask's response handling. For a
        DynamoDB call that was about a quarter of moto's CPU (cProfile); SQS's receives, which the local
        platform's queue driver keeps making, pay the same. Their target header names the service and the
        action; nobody calls either from a browser (CORS is for S3's uploads, which keep the flask path); and the
        handler gets the same werkzeug request and answers the same tuple that moto's flask view
        (`convert_to_flask_response`) turns into a response. A compressed body keeps the flask path, whose
        before-request hook inflates it.
        """
        from botocore.exceptions import ClientError
        from moto.dynamodb.responses import DynamoHandler
        from moto.sqs.responses import SQSResponse
        from werkzeug.wrappers import Request, Response

        handlers = (("DynamoDB_20120810.", DynamoHandler), ("AmazonSQS.", SQSResponse))

        def application(environ, start_response):
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            handler = next((h for prefix, h in handlers if target.startswith(prefix)), None)
            if handler is None or "HTTP_CONTENT_ENCODING" in environ:
                return app(environ, start_response)
            request = Request(environ)
            try:
                result = handler.dispatch(request, request.url, dict(request.headers))
            except ClientError as exc:
                result = 400, {}, exc.response["Error"]["Message"]
            status, headers, content = result if len(result) == 3 else (200, {}, result)
            return Response(response=content, status=status, headers=headers)(environ, start_response)

        return application

    def _quiet_requests():
        """Logs only the requests moto answered with a 5xx, not a line for every request.

        werkzeug writes a coloured access line to stderr for each request, and moto.ts reads stderr (its tail
        explains a failed start), so each line also cost the platform's Node process a read. Formatting and
        writing it was about 6 % of moto's CPU per DynamoDB call (cProfile). Errors are still written.
        """
        _log_request = _serving.WSGIRequestHandler.log_request

        def log_request(self, code="-", size="-"):
            if str(code).startswith("5"):
                _log_request(self, code, size)

        _serving.WSGIRequestHandler.log_request = log_request


    def _item_level_transaction_rollback(note_index_keys):
        """Makes moto's TransactWriteItems roll back the items it touched instead of whole tables.

        moto 5 snapshots a table with copy.deepcopy before a transaction (once per
        item of the transaction) so that a cancelled one can be undone. That
        costs time in proportion to the table: with the thousands of items a
        site deploy leaves, one transaction took over a second locally, while
        real DynamoDB answers in milliseconds. Under the lock above no other
        DynamoDB call runs during a transaction, so remembering the few items it
        touches and putting them back on failure is the same undo.
        """
        import copy as _copy

        from moto.dynamodb import models as _models
        from moto.dynamodb.models.table import Table as _Table

        class _NoTableSnapshots:
            """moto's `copy` for its backend module: tables are not copied (see below), everything else is."""

            def __getattr__(self, name):
                return getattr(_copy, name)

            @staticmethod
            def deepcopy(value, *args, **kwargs):
                if isinstance(value, _Table):
                    return value
                return _copy.deepcopy(value, *args, **kwargs)

        _models.copy = _NoTableSnapshots()
        _transact = _models.DynamoDBBackend.transact_write_items

        def transact_write_items(self, transact_items):
            touched = []
            for entry in transact_items:
                try:
                    _, op = next(iter(entry.items()))
                    table = self.tables.get(op.get("TableName"))
                    if table is None:
                        continue
                    key = op.get("Key")
                    if key is None:
                        attrs = op["Item"]
                        key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                        if table.range_key_attr is not None:
                            key[table.range_key_attr] = attrs[table.range_key_attr]
                    hash_value, range_value = self.get_keys_value(table, key)
                    current = table.get_item(hash_value, range_value)
                    touched.append((table, hash_value, range_value, _copy.deepcopy(current)))
                except Exception:
                    # A malformed entry: moto's own validation below refuses it before writing anything.
                    continue
            try:
                return _transact(self, transact_items)
            except Exception:
                for table, hash_value, range_value, original in reversed(touched):
                    table.delete_item(hash_value, range_value)
                    if original is None:
                        continue
                    if range_value:
                        table.items[hash_value][range_value] = original
                    else:
                        table.items[hash_value] = original
                    note_index_keys(table, original)
                raise

        _models.DynamoDBBackend.transact_write_items = transact_write_items

    def _ecs_task_network_interface():
        """Lets moto's ECS RunTask of an awsvpc task (Fargate) describe its network interface.

        moto 5.2 reads `private_dns_name` of the interface it makes for the task, an attribute
        its EC2 NetworkInterface does not have, and answers RunTask with a 500. The name is
        EC2's form for us-east-1 (the local region). Applied at the first ECS call: importing moto's EC2
        is two thirds of a moto_server's start (1.4 of 2.0 CPU-s), and most local platforms never run a task.
        """
        from moto.ec2.models.elastic_network_interfaces import NetworkInterface

        if not hasattr(NetworkInterface, "private_dns_name"):
            NetworkInterface.private_dns_name = property(
                lambda self: f"ip-{str(self.private_ip_address).replace('.', '-')}.ec2.internal"
            )

    def _at_first_ecs_call(app):
        patched = []

        def application(environ, start_response):
            if not patched and environ.get("HTTP_X_AMZ_TARGET", "").startswith("AmazonEC2ContainerService"):
                _ecs_task_network_interface()
                patched.append(True)
            return app(environ, start_response)

        return application

    def _cached_module_list():
        """Lists moto's service packages once instead of on every request.

        moto_server's dispatcher asks `list_of_moto_modules()` twice per request whether the Host
        names a service; each call lists moto's package folder and stats its ~180 entries. That was
        about a third of the CPU moto spent on a PutObject, and moto (one process, one interpreter
        lock) is what a local deploy waits on. The folder does not change while the server runs.
        """
        from moto import backends as _backends

        listing = getattr(_backends, "list_of_moto_modules", None)
        if listing is None:
            return  # another moto: nothing to spare
        modules = tuple(listing())
        _backends.list_of_moto_modules = lambda: modules

    def _cheaper_dispatch():
        """Spares moto two costs it pays on every request, whatever the service.

        Profiled over 4,000 DynamoDB calls: `method_names_from_class` lists the response class's members with
        `inspect.getmembers` to see whether the action is one of them (12 % of moto's CPU; a class's methods do
        not change while the server runs, so each class is listed once), and the 52-character request id is drawn
        one `random.choice` at a time (10 %; `choices` draws the same characters in one call).
        """
        import string

        from moto.core import responses as _responses
        from moto.moto_api._internal.moto_random import MotoRandom

        listing = _responses.method_names_from_class
        listed = {}

        def method_names_from_class(clazz):
            names = listed.get(clazz)
            if names is None:
                names = listed[clazz] = frozenset(listing(clazz))
            return names

        _responses.method_names_from_class = method_names_from_class

        def get_random_string(self, length=20, include_digits=True, lower_case=False):
            pool = string.ascii_letters + (string.digits if include_digits else "")
            drawn = "".join(self.choices(pool, k=length))
            return drawn.lower() if lower_case else drawn

        MotoRandom.get_random_string = get_random_string

    def _answer_over(table, items, answer):
        """moto's answer with the table's `all_items` narrowed to `items`: the two Query patches below hand moto the
        items it would have kept anyway. They run under the DynamoDB lock, so no other request sees it narrowed."""
        table.all_items = lambda: items
        try:
            return answer()
        finally:
            del table.all_items

    def _partition_queries():
        """Makes moto's Query of a table (not an index) read the one partition it names.

        moto 5 answers every Query by sorting all the table's items and keeping those of the
        partition: with the tens of thousands of items a local platform gathers (a 5,000-file deploy
        alone records 5,000 held blobs), a Query of a two-item partition took over 100 ms, where
        DynamoDB reads the partition alone. The partition's items are the same items, so the answer
        is the same. Queries run under the DynamoDB lock above, so no other request sees the
        table's `all_items` narrowed while one runs.
        """
        from moto.dynamodb.models.table import Table as _Table

        _query = _Table.query

        def query(self, hash_key, *args, **kwargs):
            index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
            if index_name or hash_key is None or not self.range_key_attr or "all_items" in vars(self):
                return _query(self, hash_key, *args, **kwargs)
            partition = list(self.items.get(hash_key, {}).values())
            return _answer_over(self, partition, lambda: _query(self, hash_key, *args, **kwargs))

        _Table.query = query

    def _index_partitions():
        """Makes moto's Query of an index read the items of the one index partition it names.

        moto 5 answers a Query of an index by sorting every item of the table (each comparison casting
        both values) and then keeping those whose index key matches: the source project's Query averaged
        13 ms, the most CPU of any DynamoDB action, growing with the table. This keeps, per table and
        index key attribute, which items had which value, noted where an item's state is made (a put, an
        update, a transaction's undo), and hands moto the items now under the queried value; moto's own
        matching, sorting, paging and filters then run on them as before, so the answer is the same. A
        noted item whose value has changed since is dropped at the next look. All of it runs under the
        DynamoDB lock above.
        """
        import weakref

        from moto.dynamodb.models import DynamoDBBackend as _Backend
        from moto.dynamodb.models.table import Table as _Table

        by_table = {}

        def value_key(value):
            # Index keys are strings or binary; a number's equality is numeric, so those keep moto's own path.
            if value is None or value.type not in ("S", "B"):
                return None
            return (value.type, value.value)

        def items_of(table):
            for hash_set in table.items.values():
                if table.range_key_attr:
                    yield from hash_set.values()
                else:
                    yield hash_set

        def maps_of(table):
            entry = by_table.get(id(table))
            if entry is None or entry[0]() is not table:
                entry = by_table[id(table)] = (weakref.ref(table), {})
            return entry[1]

        def file_under(partitions, attr, item):
            key = value_key(item.attrs.get(attr))
            if key is not None:
                partitions.setdefault(key, set()).add((item.hash_key, item.range_key))

        def note(table, item):
            if item is None:
                return
            for attr, partitions in maps_of(table).items():
                file_under(partitions, attr, item)

        def partition(table, attr, value):
            maps = maps_of(table)
            partitions = maps.get(attr)
            if partitions is None:
                partitions = maps[attr] = {}
                for item in items_of(table):
                    file_under(partitions, attr, item)
            wanted = value_key(value)
            found = []
            for item_key in list(partitions.get(wanted, ())):
                hash_value, range_value = item_key
                item = table.items.get(hash_value)
                if item is not None and table.range_key_attr:
                    item = item.get(range_value)
                if item is None or value_key(item.attrs.get(attr)) != wanted:
                    partitions[wanted].discard(item_key)
                    continue
                found.append(item)
            return found

        _query = _Table.query

        def query(self, hash_key, *args, **kwargs):
            index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
            conditions = kwargs.get("hash_key_conditions") or []
            if not index_name or len(conditions) != 1 or value_key(conditions[0][1]) is None or "all_items" in vars(self):
                return _query(self, hash_key, *args, **kwargs)
            attr, value = conditions[0]
            return _answer_over(self, partition(self, attr, value), lambda: _query(self, hash_key, *args, **kwargs))

        _Table.query = query

        _put = _Table.put_item

        def put_item(self, *args, **kwargs):
            item = _put(self, *args, **kwargs)
            note(self, item)
            return item

        _Table.put_item = put_item

        _update = _Backend.update_item

        def update_item(self, table_name, key, *args, **kwargs):
            # An update changes the stored item in place: note its state after, whatever the outcome.
            try:
                return _update(self, table_name, key, *args, **kwargs)
            finally:
                try:
                    table = self.get_table(table_name)
                    note(table, table.get_item(*self.get_keys_value(table, key)))
                except Exception:
                    pass

        _Backend.update_item = update_item
        return note

    # Services whose state the local platform keeps across a restart (lib/local/persistence.ts): what it
    # provisions and calls. IAM is left out: moto fills it with thousands of managed policies of its own.
    _KEPT_SERVICES = ("dynamodb", "s3", "sqs", "scheduler", "ses", "sesv2", "cloudfront", "acm", "route53")
    # Calls that change nothing worth keeping: they do not mark the state as changed. (A receive only moves a
    # message's visibility, which a restart may forget.)
    _READ_TARGETS = (
        "DynamoDB_20120810.GetItem", "DynamoDB_20120810.Query", "DynamoDB_20120810.Scan",
        "DynamoDB_20120810.BatchGetItem", "DynamoDB_20120810.DescribeTable", "DynamoDB_20120810.DescribeTimeToLive",
        "AmazonSQS.ReceiveMessage", "AmazonSQS.GetQueueAttributes", "AmazonSQS.GetQueueUrl", "AmazonSQS.ListQueues",
    )

    def _kept_backends():
        """The attributes of every backend of the kept services, by (service, account, region)."""
        from moto.backends import get_backend

        backends = {}
        for service in _KEPT_SERVICES:
            for account, regions in list(get_backend(service).items()):
                for region, backend in list(regions.items()):
                    backends[(service, account, region)] = backend.__dict__
        return backends

    def _restore_backends(saved):
        """Puts saved attributes back into the fresh backends, before the first request."""
        from moto.backends import get_backend

        for (service, account, region), attributes in saved.items():
            get_backend(service)[account][region].__dict__.update(attributes)
            if service == "sqs":
                # What the stopped platform had received and not deleted is nobody's now: visible again at
                # once, rather than after its visibility timeout (up to 15 minutes of a stalled queue).
                for queue in attributes.get("queues", {}).values():
                    for message in getattr(queue, "_messages", []):
                        message.visible_at = 0.0
                    getattr(queue, "_pending_messages", set()).clear()
            if service == "s3":
                # Which account owns each bucket name is kept beside the backends, not in them: without
                # it, the platform's CreateBucket at start would replace each bucket with an empty one.
                for bucket in attributes.get("buckets", {}):
                    get_backend("s3").bucket_accounts[bucket] = account

    def _report(status_path, resumed, reason, saved_at=None):
        """What the platform prints at start: whether the saved state was resumed (and its save time), and why not."""
        import json

        with open(status_path, "w") as out:
            json.dump({"resumed": resumed, "reason": reason, "saved_at": saved_at}, out)

    def _write_private(path, blob):
        """Writes then renames, owner only: the table holds token hashes and sealed secrets."""
        temp = f"{path}.{os.getpid()}.tmp"
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(blob)
        os.replace(temp, path)

    def _watch(seconds, changed, save):
        """Saves every `seconds` while something changed, and once more when the platform is gone.

        The platform that started this moto is its parent: if it dies without stopping it (killed), the state
        is saved and moto exits rather than run on as an orphan that Ctrl-C no longer reaches.
        """
        import time

        parent = os.getppid()
        due = time.monotonic() + seconds if seconds > 0 else None
        while True:
            time.sleep(0.25)
            if os.getppid() != parent:
                save()
                os._exit(0)
            if due is not None and time.monotonic() >= due:
                due = time.monotonic() + seconds
                if changed.is_set():
                    save()

    def _persistence(application):
        """Keeps moto's state in a file across a stop and a start (SLIPWAY_MOTO_STATE_FILE).

        moto keeps everything in memory and has no snapshot of its own (its recorder replays requests,
        server-made ids and times included). Its backends are plain Python objects: their attributes are
        pickled and put back into the fresh backends before the first request. Saved at SIGTERM (the
        platform's stop), every SLIPWAY_MOTO_SNAPSHOT_SECONDS while something changed, and when the platform
        is gone. Ctrl-C reaches this process too: ignored, so the platform's own stop comes first.
        """
        import copyreg
        import pickle
        import signal
        import sys
        import time

        import moto

        # Locks inside backends (an SQS queue's) are made anew, unlocked.
        copyreg.pickle(type(threading.RLock()), lambda lock: (threading.RLock, ()))
        copyreg.pickle(type(threading.Lock()), lambda lock: (threading.Lock, ()))

        path = os.environ["SLIPWAY_MOTO_STATE_FILE"]
        status_path = path + ".status.json"
        save_lock = threading.Lock()
        changed = threading.Event()

        report = lambda resumed, reason, saved_at=None: _report(status_path, resumed, reason, saved_at)  # noqa: E731

        def load():
            if not os.path.exists(path):
                return report(False, "no saved state")
            try:
                with open(path, "rb") as source:
                    saved = pickle.load(source)
                if saved.get("moto") != moto.__version__:
                    raise ValueError(f"saved by moto {saved.get('moto')}, this is moto {moto.__version__}")
                _restore_backends(saved["backends"])
                # Seconds since the epoch: the platform prints them as a time a person reads.
                report(True, "saved earlier", saved.get("saved_at"))
            except Exception as error:  # a state this moto cannot read: set aside, start empty
                os.replace(path, path + ".unreadable")
                report(False, f"the saved state could not be read ({error}); it was moved to {path}.unreadable")

        def save():
            with save_lock:
                changed.clear()
                backends = _kept_backends()
                for attempt in range(5):
                    try:
                        blob = pickle.dumps({"moto": moto.__version__, "saved_at": time.time(), "backends": backends})
                        break
                    except RuntimeError:  # a request changed a dict while it was pickled: again
                        time.sleep(0.05)
                else:
                    changed.set()
                    return
                _write_private(path, blob)

        def save_logged():
            try:
                save()
            except Exception as error:
                sys.stderr.write(f"slipway: saving moto's state failed: {error}\n")

        def stop(signum, frame):
            try:
                save()
            finally:
                os._exit(0)

        load()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, stop)
        seconds = float(os.environ.get("SLIPWAY_MOTO_SNAPSHOT_SECONDS") or 30)
        threading.Thread(target=_watch, args=(seconds, changed, save_logged), daemon=True).start()

        def application_marking_changes(environ, start_response):
            method = environ.get("REQUEST_METHOD", "GET")
            if method not in ("GET", "HEAD") and environ.get("HTTP_X_AMZ_TARGET", "") not in _READ_TARGETS:
                changed.set()
            return application(environ, start_response)

        return application_marking_changes

    def _schedule_group_conflict():
        """Makes moto's CreateScheduleGroup refuse a name that exists, as EventBridge Scheduler does (409 Conflict).

        moto 5.2 replaces the group with an empty one instead, dropping its schedules: the local platform
        provisions its group at every start, which emptied the group of a state kept across a restart.
        """
        from moto.core.exceptions import JsonRESTError
        from moto.scheduler.models import EventBridgeSchedulerBackend

        class ConflictException(JsonRESTError):
            code = 409

        _create = EventBridgeSchedulerBackend.create_schedule_group

        def create_schedule_group(self, name, tags):
            if name in self.schedule_groups:
                raise ConflictException("ConflictException", f"Schedule group {name} already exists.")
            return _create(self, name, tags)

        EventBridgeSchedulerBackend.create_schedule_group = create_schedule_group

    def _codebuild_builds():
        """Makes moto's CodeBuild builds run until stopped, and report the environment they were started with.

        moto 5.2's StartBuild drops `environmentVariablesOverride` (real CodeBuild's BatchGetBuilds
        reports a build's effective `environment.environmentVariables`), and its BatchGetBuilds
        reports every build SUCCEEDED from the first look, though no container ran. A build here
        stays IN_PROGRESS until StopBuild, as a real one does while its container works; the
        platform judges a build by the result object its build script writes (lib/builds/cloud-host.ts),
        and a test plays the container from the recorded environment.
        """
        import json as _json

        from moto.codebuild import models as _cb_models
        from moto.codebuild import responses as _cb_responses

        def batch_get_builds(self, ids):
            return [build for history in self.build_metadata_history.values() for build in history if build["id"] in ids]

        _cb_models.CodeBuildBackend.batch_get_builds = batch_get_builds
        _start_build = _cb_responses.CodeBuildResponse.start_build

        def start_build(self):
            build = _json.loads(_start_build(self))["build"]
            overrides = self._get_param("environmentVariablesOverride") or []
            timeout = self._get_param("timeoutInMinutesOverride")
            for history in self.codebuild_backend.build_metadata_history.values():
                for recorded in history:
                    if recorded["id"] == build["id"]:
                        recorded["environment"] = dict(recorded["environment"], environmentVariables=overrides)
                        if timeout:
                            recorded["timeoutInMinutes"] = timeout
                        build = recorded
            return _json.dumps({"build": build})

        _cb_responses.CodeBuildResponse.start_build = start_build

    def _item_responses_as_json():
        """Writes the item calls' DynamoDB answers with json.dumps instead of moto's shape-walking serializer.

        moto 5.2 serializes every answer by walking botocore's output shape, member by member, through a
        value picker: for the item calls (an item is a map of attribute-value structures) that was 38% of
        all the CPU moto spent while the queued door ran (measured with cProfile), more than the calls'
        own work. Their answers are already the wire's JSON once bytes are base64 (the awsJson protocol's
        blob) and absent members left out, which is all this does; other calls, and every error, keep
        moto's serializer.
        """
        import base64
        import json
        from datetime import datetime

        from moto.core.utils import unix_time
        from moto.dynamodb.responses import DynamoResult

        item_calls = {
            "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
            "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
        }

        def plain(value):
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items() if v is not None}
            if isinstance(value, list):
                return [plain(v) for v in value]
            if isinstance(value, bytes):
                return base64.b64encode(value).decode("ascii")
            if isinstance(value, datetime):
                return unix_time(value)
            return value

        _execute = DynamoResult.execute_result

        def execute_result(self, context):
            result = self.result
            if context.operation_model.name not in item_calls or not isinstance(result, dict):
                return _execute(self, context)
            return 200, {"Content-Type": "application/x-amz-json-1.0"}, json.dumps(plain(result))

        DynamoResult.execute_result = execute_result

    def _keep_alive():
        """Answers in HTTP/1.1 (chunked answers where moto gives no length).

        This does not keep connections open: werkzeug 3 adds `Connection: close` to every answer and
        then waits up to 10 ms for bytes left on the connection, so every SDK call still opens a TCP
        connection and moto a thread for it (measured: two per API request). Real keep-alive (the body
        read whole first, that header and that wait dropped, TCP_NODELAY) worked, but saved no CPU in
        a run of seven moto-heavy test files (155 CPU-s either way), so it is not applied.
        """
        _serving.WSGIRequestHandler.protocol_version = "HTTP/1.1"

    def _exit_with_parent():
        """Stops this moto_server when the process that started it is gone.

        A Node process that is killed (a test worker that vitest ends, `npm run dev` sent SIGKILL) runs no exit
        handler, so it cannot stop its child: the orphan would keep its port, its memory and its threads until the
        machine restarts. The parent's pid comes from moto.ts; SIGTERM is what a stop sends, so a moto that keeps its
        state still saves it (the handler `_persistence` installs).
        """
        parent = os.environ.get("SLIPWAY_MOTO_PARENT_PID")
        if not parent or not parent.isdigit():
            return
        import signal
        import time

        def watch():
            while os.getppid() == int(parent):
                time.sleep(1)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True).start()

    def _one_certificate_key():
        """Makes moto's ACM sign every certificate it issues with one RSA key, made once.

        moto 5.2 generates a 2048-bit key for each RequestCertificate: about 100 ms of CPU each, 2 of the 32 CPU-s
        moto spent on seven test files, one of them the custom domains'. Nothing reads the key (the platform asks
        ACM for a certificate's status and validation records, never its key), and only moto's process shares it.
        """
        from cryptography.hazmat.primitives.asymmetric import rsa

        _generate = rsa.generate_private_key
        made = {}

        def generate_private_key(public_exponent, key_size, backend=None):
            key = made.get((public_exponent, key_size))
            if key is None:
                key = made[(public_exponent, key_size)] = _generate(public_exponent=public_exponent, key_size=key_size)
            return key

        rsa.generate_private_key = generate_private_key

    def run_simple(hostname, port, application, *args, **kwargs):
        _exit_with_parent()
        _cached_module_list()
        _cheaper_dispatch()
        _partition_queries()
        _item_level_transaction_rollback(_index_partitions())
        _schedule_group_conflict()
        _codebuild_builds()
        _item_responses_as_json()
        _keep_alive()
        _quiet_requests()
        _one_certificate_key()
        application = _at_first_ecs_call(_serialize_dynamodb(_without_flask(application)))
        if os.environ.get("SLIPWAY_MOTO_STATE_FILE"):
            application = _persistence(application)
        return _run_simple(hostname, port, application, *args, **kwargs)

    _serving.run_simple = run_simple
