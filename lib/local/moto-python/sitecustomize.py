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


    def _item_level_transaction_rollback():
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
                raise

        _models.DynamoDBBackend.transact_write_items = transact_write_items

    def _ecs_task_network_interface():
        """Lets moto's ECS RunTask of an awsvpc task (Fargate) describe its network interface.

        moto 5.2 reads `private_dns_name` of the interface it makes for the task, an attribute
        its EC2 NetworkInterface does not have, and answers RunTask with a 500. The name is
        EC2's form for us-east-1 (the local region).
        """
        from moto.ec2.models.elastic_network_interfaces import NetworkInterface

        if not hasattr(NetworkInterface, "private_dns_name"):
            NetworkInterface.private_dns_name = property(
                lambda self: f"ip-{str(self.private_ip_address).replace('.', '-')}.ec2.internal"
            )

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
            self.all_items = lambda: partition
            try:
                return _query(self, hash_key, *args, **kwargs)
            finally:
                del self.all_items

        _Table.query = query

    def run_simple(hostname, port, application, *args, **kwargs):
        _cached_module_list()
        _partition_queries()
        _item_level_transaction_rollback()
        _ecs_task_network_interface()
        return _run_simple(hostname, port, _serialize_dynamodb(application), *args, **kwargs)

    _serving.run_simple = run_simple
