"""Serializes DynamoDB requests inside the local moto_server, and makes its transactions
roll back item by item (loaded by lib/local/moto.ts).

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

    def run_simple(hostname, port, application, *args, **kwargs):
        _item_level_transaction_rollback()
        _ecs_task_network_interface()
        return _run_simple(hostname, port, _serialize_dynamodb(application), *args, **kwargs)

    _serving.run_simple = run_simple
