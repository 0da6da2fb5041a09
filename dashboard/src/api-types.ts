/**
 * Generated from docs/openapi.json by openapi-typescript, through `npm run docs` (lib/http/write-docs.ts).
 * Do not edit: change the schemas (lib/http/responses.ts, the handlers' zod schemas) and run `npm run docs`.
 * test/unit/openapi.test.ts fails when this file is not current.
 */

export interface paths {
    "/api/v1/team/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the current team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** @description Role admin or higher in the current team. */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        name?: string;
                        slug?: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/teams/{team}/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    team: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/deletion": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role owner or higher in the current team (sessions only). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        /** @description Role owner or higher in the current team (sessions only). */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/sign-in-link": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** Format: email */
                        email: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/sign-in": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        token: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/sign-out": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Any signed-in caller (sessions only, API keys refused). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Any signed-in caller (sessions only, API keys refused). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Me"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/teams": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Any signed-in caller (sessions only, API keys refused). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["MyTeam"][];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Any signed-in caller (sessions only, API keys refused). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["MyInvitation"][];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/invitations/{id}/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Any signed-in caller (sessions only, API keys refused). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the current team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Member"][];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/members/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        role: "admin" | "member";
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/team/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role admin or higher in the current team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Invitation"][];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** Format: email */
                        email: string;
                        /** @enum {string} */
                        role: "admin" | "member";
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Invitation"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/invitations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role admin or higher in the current team (sessions only). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["ApiKey"][];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        name: string;
                        /** @enum {string} */
                        role?: "admin" | "member";
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["NewApiKey"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** @description Role admin or higher in the current team (sessions only). */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/teams/{id}/legal-hold": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Platform administrators. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        hold: boolean;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/deletions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Platform administrators. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                deletions: components["schemas"]["PendingDeletion"][];
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/teams/{id}/functions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Platform administrators. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/abuse-scans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Platform administrators. */
        get: {
            parameters: {
                query?: {
                    review_status?: "new" | "dismissed" | "actioned";
                    page?: string;
                    page_size?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                page: number;
                                page_size: number;
                                total: number;
                                scans: components["schemas"]["AbuseScan"][];
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/abuse-scans/{id}/review": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Platform administrators. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        review_status: "dismissed" | "actioned";
                        resolution?: string | null;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/attention": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Platform administrators. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/teams/{id}/subscription": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** @description Platform administrators. */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        plan: "free" | "pro" | "team";
                        /** @enum {string} */
                        status: "active" | "trialing" | "past_due" | "unpaid" | "incomplete" | "incomplete_expired" | "canceled";
                        cancel_at_period_end?: boolean;
                        /** Format: date-time */
                        created_at?: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/failed-webhook-events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Platform administrators. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        action: "retry" | "dismiss";
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/feedback/{id}/handled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Platform administrators. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/public/abuse-reports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        _hp?: string | null;
                        /** @enum {string} */
                        category: "phishing" | "malware" | "fraud" | "child_sexual_abuse" | "terrorist_content" | "illegal_hate_speech" | "non_consensual_intimate_imagery" | "intellectual_property" | "privacy_violation" | "illegal_goods_or_services" | "spam" | "other_illegal_content";
                        description: string;
                        reported_urls: string[];
                        reporter_name?: string | null;
                        reporter_email?: "" | string | null;
                        /** @enum {boolean} */
                        good_faith_declared: true;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/billing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. Stripe webhook endpoint: the body is a Stripe event, verified by its signature (docs/attention.md). */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description t=<epoch seconds>,v1=<hex HMAC-SHA256 of "t.body" under the endpoint secret>; t within 300 s */
                    "Stripe-Signature": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/feedback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the current team (sessions only). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        message: string;
                        /** @enum {string} */
                        type?: "bug" | "idea" | "question" | "general";
                        page_route?: string | null;
                        app_version?: string | null;
                        viewport?: string | null;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/members/transfer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role owner or higher in the current team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** Format: uuid */
                        new_owner_id: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the current team (sessions only). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Notices"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notices/seen": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Any signed-in caller (sessions only, API keys refused). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        seen_at: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notices/{key}/dismiss": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the current team (sessions only). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    key: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/email-verification/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Any signed-in caller (sessions only, API keys refused). */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/email-verification/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        token: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Any signed-in caller (sessions only, API keys refused). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/git-host/connect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role admin or higher in the resource's team (sessions only). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/sso/discover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the current team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": unknown;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["IdentityProviderDiscovery"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/env": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: {
                    environment?: "production" | "preview" | "development";
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                variables: components["schemas"]["EnvVariable"][];
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/env/bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        content: string;
                        /** @enum {string} */
                        environment: "production" | "preview" | "development";
                        targets?: "build"[];
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["EnvImport"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/env/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** @description Role admin or higher in the resource's team. */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        value: string;
                        /** @enum {string} */
                        environment: "production" | "preview" | "development";
                        targets?: "build"[];
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the current team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        files?: unknown;
                        label?: string | null;
                        project: {
                            name: string;
                            subdomain?: string | null;
                        };
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["UploadSession"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads/{upload_id}/files/{hash}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** @description Role member or higher in the resource's team. */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    upload_id: string;
                    hash: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/octet-stream": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads/{upload_id}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    upload_id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/octet-stream": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads/{upload_id}/files/{hash}/upload-url": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    upload_id: string;
                    hash: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads/{upload_id}/files/{hash}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    upload_id: string;
                    hash: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/uploads/{upload_id}/finalize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    upload_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["FinalizedUpload"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/uploads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        files?: unknown;
                        label?: string | null;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["UploadSession"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the current team. */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                projects: components["schemas"]["Project"][];
                                next_cursor: string | null;
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        /** @description Role admin or higher in the current team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        framework?: "nextjs" | "sveltekit" | "astro" | "hugo" | "vite" | "gatsby" | "jekyll" | "static-html" | "other";
                        build_command?: string | null;
                        output_dir?: string | null;
                        root_directory?: string | null;
                        /** @enum {string|null} */
                        package_manager?: "npm" | "pnpm" | "yarn" | "bun" | null;
                        default_branch?: string | null;
                        git_provider?: string | null;
                        /** Format: uri */
                        git_repo_url?: string | null;
                        git_connection_id?: string | null;
                        git_auth_mode?: ("pat" | "forge_jwt") | "" | null;
                        forge_audience?: string | null;
                        auto_deploy_enabled?: boolean;
                        mr_previews_enabled?: boolean;
                        /** @enum {string} */
                        preview_branch_mode?: "all" | "none" | "custom";
                        preview_branch_include?: string[];
                        preview_branch_exclude?: string[];
                        /** @enum {string} */
                        platform_url_mode?: "redirect" | "serve";
                        analytics_enabled?: boolean;
                        git_access_token?: string | null;
                        name: string;
                        subdomain?: string | null;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Project"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Project"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** @description Role admin or higher in the resource's team. */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** @description Role admin or higher in the resource's team. */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        name?: string;
                        subdomain?: string;
                        slug?: string;
                        /** @enum {string} */
                        framework?: "nextjs" | "sveltekit" | "astro" | "hugo" | "vite" | "gatsby" | "jekyll" | "static-html" | "other";
                        build_command?: string | null;
                        output_dir?: string | null;
                        root_directory?: string | null;
                        /** @enum {string|null} */
                        package_manager?: "npm" | "pnpm" | "yarn" | "bun" | null;
                        default_branch?: string | null;
                        git_provider?: string | null;
                        /** Format: uri */
                        git_repo_url?: string | null;
                        git_connection_id?: string | null;
                        git_auth_mode?: ("pat" | "forge_jwt") | "" | null;
                        forge_audience?: string | null;
                        auto_deploy_enabled?: boolean;
                        mr_previews_enabled?: boolean;
                        /** @enum {string} */
                        preview_branch_mode?: "all" | "none" | "custom";
                        preview_branch_include?: string[];
                        preview_branch_exclude?: string[];
                        /** @enum {string} */
                        platform_url_mode?: "redirect" | "serve";
                        primary_domain_id?: string | null;
                        analytics_enabled?: boolean;
                        git_access_token?: string | null;
                        preview_slug?: string | null;
                        id?: unknown;
                        team_id?: unknown;
                        production_url?: unknown;
                        status?: unknown;
                        repo_default_branch?: unknown;
                        auto_deploy_paused_at?: unknown;
                        auto_deploy_pause_reason?: unknown;
                        consecutive_build_failures?: unknown;
                        last_build_failure_message?: unknown;
                        production_branch_deleted_at?: unknown;
                        live_deployment_id?: unknown;
                        cdn_pull_zone_id?: unknown;
                        cdn_edge_rule_guid?: unknown;
                        cdn_not_found_edge_rule_guid?: unknown;
                        provisional_until?: unknown;
                        created_via?: unknown;
                        created_client?: unknown;
                        created_at?: unknown;
                        updated_at?: unknown;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Project"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/projects/{id}/deployments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. Newest first, in numbered pages as the admin abuse-scans listing: `page` (from 1, default 1), `page_size` (1 to 100, default 20); `data` is {page, page_size, total, deployments}. Reads deployment items only, never build log lines. */
        get: {
            parameters: {
                query?: {
                    page?: string;
                    page_size?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["DeploymentPage"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/deployments/{deployment_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. Besides the listing fields: `build_log`, `functions` and `serving_rules`, what publishing compiled of the deployment's `_redirects` and `_headers` (docs/serving.md): `{redirects, headers, skipped: [{file, line, reason}], skipped_count}` (`line` 1-based; `skipped` keeps the first 100 lines, `skipped_count` counts them all). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    deployment_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["DeploymentDetail"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/screenshot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                screenshot: components["schemas"]["ProjectScreenshot"] | null;
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/public/screenshots/jobs/{job_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** @description No authentication. */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    job_id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/octet-stream": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/analytics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: {
                    from?: string;
                    to?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["ProjectAnalytics"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["FunctionsList"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/{name}/invocations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                invocations: components["schemas"]["InvocationSummary"][];
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/{name}/tail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. Answers `text/event-stream`: `open`, then `console` {at, stream, line}, `error` {at, message, stack} and `call` {at, method, status, duration_ms, outcome} for calls made while it is open, and `end` after 14 minutes. Nothing is stored. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/{name}/invocations/{invocation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    name: string;
                    invocation_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Invocation"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/domains": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                domains: components["schemas"]["Domain"][];
                            };
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        domain: string;
                        /** @enum {string} */
                        connection_mode?: "byo_dns" | "managed_dns";
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Domain"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Domain"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** @description Role admin or higher in the resource's team. */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/retry-ssl": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/domains/{id}/geo-filter": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** @description Role admin or higher in the resource's team. */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        geo_mode: "off" | "allowlist" | "blocklist";
                        geo_countries?: string[];
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Domain"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/public/functions/{subdomain}/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    subdomain: string;
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/octet-stream": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/public/functions/{subdomain}/{name}/invocations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description No authentication. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    subdomain: string;
                    name: string;
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/callback-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role admin or higher in the resource's team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/callback-secret/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/functions/{name}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. Answers 202 `{invocation_id, status, poll_url}` as the queued door does; the handler gets a POST with the body sent (if any, with its Content-Type), and the invocation has `trigger: manual`. 404 `FUNCTION_NOT_FOUND` when the live deployment has no such function; 429 at the team's in-flight cap. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/octet-stream": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/git/github": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. GitHub webhook endpoint (push, pull_request, ping): 202 with what was queued and what was ignored, and why (docs/builds.md). */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description sha256=<hex HMAC-SHA256 of the raw body under the project webhook secret> */
                    "X-Hub-Signature-256": string;
                    /** @description push, pull_request or ping (others are answered 202 and ignored) */
                    "X-GitHub-Event": string;
                    /** @description the delivery id; a delivery is acted on once */
                    "X-GitHub-Delivery": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/git/gitlab": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description No authentication. GitLab webhook endpoint (Push Hook, Merge Request Hook): 202 with what was queued and what was ignored, and why (docs/builds.md). */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description the project webhook secret */
                    "X-Gitlab-Token": string;
                    /** @description Push Hook or Merge Request Hook (others are answered 202 and ignored) */
                    "X-Gitlab-Event": string;
                    /** @description the delivery id; a delivery is acted on once */
                    "X-Gitlab-Event-UUID": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": string;
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/jwks.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description No authentication. The JWKS of the forge tokens (ES256, `kid` the RFC 7638 thumbprint), answered as is (no envelope); a rotation publishes the next key ahead and keeps the old one until its tokens have expired. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/team/forge-audiences": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the current team. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        /** @description Role admin or higher in the current team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        audience: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        /** @description Role admin or higher in the current team. */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        audience: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/git/webhook-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/builds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        branch: string;
                        commit_sha?: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/auto-deploy/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role admin or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/deployments/{deployment_id}/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Role member or higher in the resource's team. */
        get: {
            parameters: {
                query?: {
                    cursor?: string;
                    limit?: string;
                };
                header?: never;
                path: {
                    id: string;
                    deployment_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["BuildLogPage"];
                            meta: components["schemas"]["ResponseMeta"];
                        };
                    };
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/projects/{id}/promote": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Role member or higher in the resource's team. */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        deployment_id: string;
                    };
                };
            };
            responses: {
                /** @description Success envelope: `data` and `meta`. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error envelope. */
                default: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ErrorEnvelope: {
            code: ("ABUSE_INTAKE_UNAVAILABLE" | "ABUSE_REPORT_INVALID" | "ABUSE_REPORT_NOT_RECORDED" | "ABUSE_REPORT_RATE_LIMITED" | "ABUSE_REPORT_URL_NOT_HOSTED" | "ABUSE_SCAN_ALREADY_REVIEWED" | "ABUSE_SCAN_NOT_FOUND" | "ABUSE_SCAN_SUPERSEDED" | "ADMIN_TEAM_ID_INVALID" | "ALREADY_A_MEMBER" | "API_KEY_NOT_FOUND" | "BUILD_LOG_CURSOR_INVALID" | "CALLBACK_URL_INVALID" | "CONFLICT" | "CROSS_SITE_REQUEST_REFUSED" | "DEPLOYMENT_NOT_FOUND" | "DEPLOYMENT_NOT_READY" | "DNS_LOOKUP_UNAVAILABLE" | "DNS_ZONE_UNAVAILABLE" | "DOMAIN_CHANGED" | "DOMAIN_INVALID" | "DOMAIN_NOT_FOUND" | "DOMAIN_NOT_ON_DEDICATED_ZONE" | "DOMAIN_NOT_VERIFIED" | "DOMAIN_RESERVED" | "DOMAIN_TAKEN" | "EMAIL_CONFIRMATION_INVALID" | "EMAIL_DELIVERY_UNAVAILABLE" | "EMAIL_RESEND_LIMITED" | "ENV_IMPORT_EMPTY" | "ENV_IMPORT_TOO_MANY" | "ENV_NAME_INVALID" | "ENV_NAME_RESERVED" | "ENV_VALUE_TOO_LARGE" | "FAILED_WEBHOOK_EVENT_ID_INVALID" | "FAILED_WEBHOOK_EVENT_NOT_FOUND" | "FAILED_WEBHOOK_EVENT_NOT_RETRYABLE" | "FEEDBACK_NOT_FOUND" | "FEEDBACK_RATE_LIMITED" | "FORBIDDEN" | "FORGE_AUDIENCE_NOT_FOUND" | "FORGE_AUDIENCE_NOT_REGISTERED" | "FORGE_AUDIENCE_TAKEN" | "FUNCTIONS_BUILD_FAILED" | "FUNCTION_BODY_TOO_LARGE" | "FUNCTION_FAILED" | "FUNCTION_HOSTNAME_TAKEN" | "FUNCTION_HOSTNAME_TOO_LONG" | "FUNCTION_NOT_FOUND" | "FUNCTION_START_FAILED" | "FUNCTION_TIMEOUT" | "GEO_COUNTRIES_REQUIRED" | "GEO_COUNTRY_INVALID" | "GEO_POLICY_NOT_APPLIED" | "GIT_REPOSITORY_NOT_CONNECTED" | "GIT_WEBHOOK_HEADERS_MISSING" | "GIT_WEBHOOK_PAYLOAD_INVALID" | "GIT_WEBHOOK_SIGNATURE_INVALID" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_IN_PROGRESS" | "IDEMPOTENCY_KEY_REUSED" | "INTERNAL_ERROR" | "INVALID_INPUT" | "INVALID_JSON" | "INVALID_MANIFEST" | "INVITATION_NOT_FOUND" | "INVITATION_NOT_PENDING" | "INVITATION_PENDING" | "INVOCATION_NOT_FOUND" | "MEMBER_IS_OWNER" | "MEMBER_NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOTICE_NOT_FOUND" | "NOTICE_SEEN_AT_IN_FUTURE" | "NOT_FOUND" | "NO_CURRENT_TEAM" | "OWNERSHIP_TRANSFER_CONFLICT" | "OWNERSHIP_TRANSFER_TO_SELF" | "PAYLOAD_TOO_LARGE" | "PLAN_LIMIT_EXCEEDED" | "PLATFORM_ADMIN_REQUIRED" | "PLATFORM_STARTING" | "PREVIEW_SLUG_INVALID" | "PREVIEW_SLUG_TAKEN" | "PRIMARY_DOMAIN_NOT_IN_PROJECT" | "PRIMARY_DOMAIN_NOT_VERIFIED" | "PRIMARY_DOMAIN_REMOVED" | "PROJECT_EXPIRED" | "PROJECT_ID_INVALID" | "PROJECT_NAME_TAKEN" | "PROJECT_NOT_FOUND" | "PROJECT_SLUG_IMMUTABLE" | "PUBLISH_IN_PROGRESS" | "RATE_LIMITED" | "ROUTE_NOT_FOUND" | "SCREENSHOT_IMAGE_DIMENSIONS" | "SCREENSHOT_IMAGE_INVALID" | "SCREENSHOT_JOB_FINISHED" | "SCREENSHOT_MEDIA_TYPE_UNSUPPORTED" | "SERVICE_UNAVAILABLE" | "SESSION_REQUIRED" | "SIGN_IN_LINK_INVALID" | "SIGN_IN_LINK_LIMITED" | "SSL_ALREADY_ISSUED" | "SSO_DISCOVERY_INCOMPLETE" | "SSO_ISSUER_INVALID" | "SSO_ISSUER_MISMATCH" | "SSO_ISSUER_UNREACHABLE" | "SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS" | "SUBDOMAIN_INVALID" | "SUBDOMAIN_RESERVED" | "SUBDOMAIN_TAKEN" | "SUBSCRIPTION_CHANGED" | "TEAM_ID_INVALID" | "TEAM_NOT_FOUND" | "TEAM_SLUG_INVALID" | "TEAM_SLUG_RESERVED" | "TEAM_SLUG_TAKEN" | "TEAM_SUSPENDED" | "TOO_MANY_CONCURRENT_INVOCATIONS" | "TOO_MANY_UPLOAD_SESSIONS" | "UNAUTHENTICATED" | "UNSUPPORTED_MEDIA_TYPE" | "UPLOAD_BATCH_INVALID" | "UPLOAD_CONTENT_MISMATCH" | "UPLOAD_FILE_NOT_SENT" | "UPLOAD_HASH_NOT_IN_MANIFEST" | "UPLOAD_INCOMPLETE" | "UPLOAD_NOT_FOUND" | "UPLOAD_PHP_SITE" | "UPLOAD_SESSION_EXPIRED" | "UPLOAD_SESSION_FINALIZED" | "UPLOAD_SITE_IN_SUBFOLDER" | "UPLOAD_SOURCE_CODE" | "VALIDATION_FAILED" | "WEBHOOK_EVENT_NOT_PROCESSED" | "WEBHOOK_PAYLOAD_INVALID" | "WEBHOOK_SIGNATURE_INVALID") | string;
            details?: unknown;
            error: string;
            meta: components["schemas"]["ResponseMeta"];
        };
        ResponseMeta: {
            request_id: string;
            timestamp: string;
            trace_id: string;
        };
        Me: {
            /** Format: uuid */
            user_id: string;
            email: string;
            name: string | null;
            email_verified: boolean;
            is_platform_admin: boolean;
            default_team_id: string | null;
        };
        MyTeam: {
            /** Format: uuid */
            id: string;
            name: string;
            slug: string;
            display_label: string;
            slug_chosen_at: string | null;
            /** @enum {string} */
            role: "owner" | "admin" | "member";
            /** @description ISO 8601 UTC */
            joined_at: string;
            deletion: {
                status: string;
                purge_after: string | null;
            };
        };
        MyInvitation: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            email: string;
            /** @enum {string} */
            role: "owner" | "admin" | "member";
            /** @enum {string} */
            status: "pending" | "accepted" | "expired";
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            expires_at: string;
            accepted_at: string | null;
            invited_by: string | null;
            team_name: string | null;
        };
        Member: {
            /** Format: uuid */
            user_id: string;
            email: string | null;
            name: string | null;
            /** @enum {string} */
            role: "owner" | "admin" | "member";
            /** @description ISO 8601 UTC */
            joined_at: string;
        };
        Invitation: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            email: string;
            /** @enum {string} */
            role: "owner" | "admin" | "member";
            /** @enum {string} */
            status: "pending" | "accepted" | "expired";
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            expires_at: string;
            accepted_at: string | null;
            invited_by: string | null;
        };
        ApiKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @enum {string} */
            role: "admin" | "member";
            /** @description The token's first characters, so a person can tell keys apart. */
            prefix: string;
            /** @description ISO 8601 UTC */
            created_at: string;
            created_by: string | null;
            revoked_at: string | null;
        };
        NewApiKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @enum {string} */
            role: "admin" | "member";
            /** @description The token's first characters, so a person can tell keys apart. */
            prefix: string;
            /** @description ISO 8601 UTC */
            created_at: string;
            created_by: string | null;
            revoked_at: string | null;
            /** @description Shown in this reply only. */
            token: string;
        };
        PendingDeletion: {
            /** Format: uuid */
            team_id: string;
            team_name: string;
            /** @description ISO 8601 UTC */
            deletion_requested_at: string;
            /** @description ISO 8601 UTC */
            purge_after: string;
            legal_hold: boolean;
            overdue: boolean;
        };
        AbuseScan: {
            branch: string;
            /** @description ISO 8601 UTC */
            created_at: string;
            /** Format: uuid */
            deployment_id: string;
            error: string | null;
            files_scanned: number;
            handled_at: string | null;
            handled_by: string | null;
            /** Format: uuid */
            id: string;
            matches: {
                rule_id: string;
                category: string;
                hits: number;
                examples: {
                    path: string;
                    snippet: string;
                }[];
            }[];
            priority: string | null;
            /** Format: uuid */
            project_id: string;
            report_count: number;
            resolution: string | null;
            /** @enum {string} */
            review_status: "new" | "dismissed" | "actioned";
            scanned_at: string | null;
            score: number;
            site_host: string;
            /** @enum {string} */
            status: "queued" | "finished" | "failed";
            /** Format: uuid */
            team_id: string;
            team_name: string | null;
            truncated: boolean;
        };
        Notices: {
            notices: {
                key: string;
                title: string;
                body: string | null;
                /** @description ISO 8601 UTC */
                published_at: string;
                expires_at: string | null;
                min_role: ("owner" | "admin" | "member") | null;
                unread: boolean;
            }[];
            unread_count: number;
            seen_at: string | null;
        };
        IdentityProviderDiscovery: {
            issuer: string;
            /** @enum {string} */
            provider: "generic_oidc" | "keycloak" | "authentik";
            authorization_endpoint: string;
            token_endpoint: string;
            jwks_uri: string;
            userinfo_endpoint: string;
            redirect_uri: string;
            recommended_is_id_token_mapping: boolean;
            suggested_issuer: string;
            suggested_name: string;
            warnings: {
                code: string;
                docs_url: string;
                message: string;
            }[];
        };
        EnvVariable: {
            name: string;
            /** @enum {string} */
            environment: "production" | "preview" | "development";
            targets: "build"[];
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            updated_at: string;
        };
        EnvImport: {
            /** @enum {string} */
            environment: "production" | "preview" | "development";
            targets: "build"[];
            created: string[];
            updated: string[];
            rejected: {
                name?: string;
                line?: number;
                reason: string;
                message: string;
            }[];
        };
        UploadSession: {
            /** Format: uuid */
            upload_id: string;
            /** Format: uuid */
            deployment_id: string;
            /** Format: uuid */
            project_id: string;
            /** @description The new project, when this upload made it. */
            project?: {
                /** Format: uuid */
                id: string;
                /** Format: uuid */
                team_id: string;
                name: string;
                slug: string;
                subdomain: string;
                production_url: string;
                /** @enum {string} */
                status: "active" | "deleting";
                /** @enum {string} */
                framework: "nextjs" | "sveltekit" | "astro" | "hugo" | "vite" | "gatsby" | "jekyll" | "static-html" | "other";
                build_command: string | null;
                output_dir: string | null;
                root_directory: string | null;
                package_manager: ("npm" | "pnpm" | "yarn" | "bun") | null;
                default_branch: string | null;
                repo_default_branch: string | null;
                git_provider: string | null;
                git_repo_url: string | null;
                git_connection_id: string | null;
                git_auth_mode: ("pat" | "forge_jwt") | null;
                forge_audience: string | null;
                auto_deploy_enabled: boolean;
                auto_deploy_paused_at: string | null;
                auto_deploy_pause_reason: string | null;
                consecutive_build_failures: number;
                last_build_failure_message: string | null;
                mr_previews_enabled: boolean;
                /** @enum {string} */
                preview_branch_mode: "all" | "none" | "custom";
                preview_branch_include: string[];
                preview_branch_exclude: string[];
                preview_slug: string | null;
                primary_domain_id: string | null;
                /** @enum {string} */
                platform_url_mode: "redirect" | "serve";
                production_branch_deleted_at: string | null;
                live_deployment_id: string | null;
                cdn_pull_zone_id: number | null;
                cdn_edge_rule_guid: string | null;
                cdn_not_found_edge_rule_guid: string | null;
                analytics_enabled: boolean;
                provisional_until: string | null;
                created_via: ("session" | "push" | "api_key") | null;
                created_client: ("dashboard" | "cli" | "mcp" | "migrate") | null;
                /** @description ISO 8601 UTC */
                created_at: string;
                /** @description ISO 8601 UTC */
                updated_at: string;
            };
            /** @description ISO 8601 UTC */
            expires_at: string;
            known_count: number;
            /** @description The hashes of the manifest the platform lacks: send only these. */
            missing: string[];
            total_bytes_to_send: number;
        };
        FinalizedUpload: {
            /** Format: uuid */
            upload_id: string;
            /** Format: uuid */
            deployment_id: string;
            /** Format: uuid */
            project_id: string;
            /** @enum {string} */
            status: "ready";
            url: string;
            file_count: number;
            total_bytes: number;
            /** @description ISO 8601 UTC */
            ready_at: string;
        };
        Project: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            name: string;
            slug: string;
            subdomain: string;
            production_url: string;
            /** @enum {string} */
            status: "active" | "deleting";
            /** @enum {string} */
            framework: "nextjs" | "sveltekit" | "astro" | "hugo" | "vite" | "gatsby" | "jekyll" | "static-html" | "other";
            build_command: string | null;
            output_dir: string | null;
            root_directory: string | null;
            package_manager: ("npm" | "pnpm" | "yarn" | "bun") | null;
            default_branch: string | null;
            repo_default_branch: string | null;
            git_provider: string | null;
            git_repo_url: string | null;
            git_connection_id: string | null;
            git_auth_mode: ("pat" | "forge_jwt") | null;
            forge_audience: string | null;
            auto_deploy_enabled: boolean;
            auto_deploy_paused_at: string | null;
            auto_deploy_pause_reason: string | null;
            consecutive_build_failures: number;
            last_build_failure_message: string | null;
            mr_previews_enabled: boolean;
            /** @enum {string} */
            preview_branch_mode: "all" | "none" | "custom";
            preview_branch_include: string[];
            preview_branch_exclude: string[];
            preview_slug: string | null;
            primary_domain_id: string | null;
            /** @enum {string} */
            platform_url_mode: "redirect" | "serve";
            production_branch_deleted_at: string | null;
            live_deployment_id: string | null;
            cdn_pull_zone_id: number | null;
            cdn_edge_rule_guid: string | null;
            cdn_not_found_edge_rule_guid: string | null;
            analytics_enabled: boolean;
            provisional_until: string | null;
            created_via: ("session" | "push" | "api_key") | null;
            created_client: ("dashboard" | "cli" | "mcp" | "migrate") | null;
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            updated_at: string;
        };
        DeploymentPage: {
            page: number;
            page_size: number;
            total: number;
            deployments: components["schemas"]["Deployment"][];
        };
        Deployment: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            project_id: string;
            /** Format: uuid */
            team_id: string;
            /** @enum {string} */
            status: "uploading" | "queued" | "building" | "ready" | "failed" | "canceled" | "skipped";
            label: string | null;
            /** @description ISO 8601 UTC */
            created_at: string;
            ready_at: string | null;
            file_count: number;
            total_bytes: number;
            is_live: boolean;
            trigger: ("push" | "merge_request" | "manual") | null;
            target: ("production" | "preview") | null;
            branch: string | null;
            commit_sha: string | null;
            commit_message: string | null;
            merge_request: number | null;
            preview_url: string | null;
            queued_at: string | null;
            started_at: string | null;
            finished_at: string | null;
            failure_message: string | null;
            skip_reason: string | null;
            /** @description Lines in the build's log (GET .../log reads them from a cursor). */
            log_lines: number;
        };
        DeploymentDetail: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            project_id: string;
            /** Format: uuid */
            team_id: string;
            /** @enum {string} */
            status: "uploading" | "queued" | "building" | "ready" | "failed" | "canceled" | "skipped";
            label: string | null;
            /** @description ISO 8601 UTC */
            created_at: string;
            ready_at: string | null;
            file_count: number;
            total_bytes: number;
            is_live: boolean;
            trigger: ("push" | "merge_request" | "manual") | null;
            target: ("production" | "preview") | null;
            branch: string | null;
            commit_sha: string | null;
            commit_message: string | null;
            merge_request: number | null;
            preview_url: string | null;
            queued_at: string | null;
            started_at: string | null;
            finished_at: string | null;
            failure_message: string | null;
            skip_reason: string | null;
            /** @description Lines in the build's log (GET .../log reads them from a cursor). */
            log_lines: number;
            build_log: string[];
            functions: string[];
            serving_rules: components["schemas"]["ServingRulesSummary"];
        };
        ServingRulesSummary: {
            redirects: number;
            headers: number;
            skipped: {
                file: string;
                line: number;
                reason: string;
            }[];
            skipped_count: number;
        };
        ProjectScreenshot: {
            /** Format: uuid */
            job_id: string;
            /** Format: uuid */
            deployment_id: string;
            /** @description ISO 8601 UTC */
            captured_at: string;
            capture_http_status: number | null;
            width: number;
            height: number;
            /** @description A signed link to the PNG, valid 15 minutes. */
            image_url: string;
            /** @description ISO 8601 UTC */
            image_url_expires_at: string;
        };
        ProjectAnalytics: {
            analytics_enabled: boolean;
            from: string;
            to: string;
            totals: {
                requests: number;
                bytes: number;
                status_classes: {
                    "2xx": number;
                    "3xx": number;
                    "4xx": number;
                    "5xx": number;
                };
            };
            days: {
                date: string;
                requests: number;
                bytes: number;
                status_classes: {
                    "2xx": number;
                    "3xx": number;
                    "4xx": number;
                    "5xx": number;
                };
            }[];
            top_paths: {
                path: string;
                requests: number;
            }[];
        };
        FunctionsList: {
            functions: components["schemas"]["FunctionView"][];
            functions_beta_enrolled: boolean;
        };
        FunctionView: {
            /** Format: uuid */
            id: string;
            name: string;
            url: string;
            /** Format: uuid */
            deployment_id: string;
            entry_path: string;
            bundle_bytes: number;
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description Its `config.schedule` (five-field cron in UTC, or a macro), or null. */
            schedule: string | null;
            next_run_at: string | null;
            skipped_runs: number;
        };
        InvocationSummary: {
            /** Format: uuid */
            id: string;
            /** @enum {string} */
            status: "pending" | "running" | "completed" | "failed" | "timed_out";
            /**
             * @description What started it: the public door, a schedule, or run now.
             * @enum {string}
             */
            trigger: "queued" | "schedule" | "manual";
            /** @description ISO 8601 UTC */
            created_at: string;
            started_at: string | null;
            finished_at: string | null;
            response_status?: number;
            error_message?: string;
        };
        Invocation: {
            /** Format: uuid */
            id: string;
            /** @enum {string} */
            status: "pending" | "running" | "completed" | "failed" | "timed_out";
            started_at: string | null;
            finished_at: string | null;
            response_status?: number;
            response_headers?: {
                [key: string]: string;
            };
            response_body?: string;
            error_message?: string;
            function_name: string;
            /**
             * @description What started it: the public door, a schedule, or run now.
             * @enum {string}
             */
            trigger: "queued" | "schedule" | "manual";
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            expires_at: string;
            console: {
                /** @description ISO 8601 UTC */
                at: string;
                /** @enum {string} */
                stream: "stdout" | "stderr";
                line: string;
            }[];
            callback: {
                url: string;
                attempts: number;
                last_status: number | null;
                last_error: string | null;
                delivered_at: string | null;
            } | null;
        };
        Domain: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            /** Format: uuid */
            project_id: string;
            domain: string;
            is_apex: boolean;
            /** @enum {string} */
            connection_mode: "byo_dns" | "managed_dns";
            /** @enum {string} */
            status: "pending_verification" | "verified" | "failed" | "awaiting_delegation";
            verification_token: string;
            verified_at: string | null;
            last_verification_attempt: string | null;
            ns_delegated_at: string | null;
            /** @description ISO 8601 UTC */
            created_at: string;
            /** @description ISO 8601 UTC */
            updated_at: string;
            deleted_at: string | null;
            /** @enum {string} */
            ssl_status: "pending" | "provisioning" | "issued" | "failed";
            ssl_attempts: number;
            ssl_error: string | null;
            ssl_error_code: string | null;
            ssl_issued_at: string | null;
            ssl_last_attempt_at: string | null;
            ssl_provisioning_started_at: string | null;
            /** @enum {string} */
            geo_mode: "off" | "allowlist" | "blocklist";
            geo_countries: string[];
            pull_zone_id: number | null;
            cdn_dns_ns1: string | null;
            cdn_dns_ns2: string | null;
            cdn_dns_zone_id: number | null;
            dns_records: components["schemas"]["DnsRecord"][];
            /** @description ISO 8601 UTC */
            next_retry_at?: string;
            debug_url?: string;
            supports_geo_filtering: boolean;
        };
        DnsRecord: {
            name: string;
            /** @enum {string} */
            type: "CNAME" | "ALIAS" | "TXT";
            value: string;
            note: string;
        };
        BuildLogPage: {
            /** Format: uuid */
            deployment_id: string;
            status: string;
            lines: string[];
            cursor: number;
            next_cursor: number;
            done: boolean;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ResponseMeta = components['schemas']['ResponseMeta'];
export type Me = components['schemas']['Me'];
export type MyTeam = components['schemas']['MyTeam'];
export type MyInvitation = components['schemas']['MyInvitation'];
export type Member = components['schemas']['Member'];
export type Invitation = components['schemas']['Invitation'];
export type ApiKey = components['schemas']['ApiKey'];
export type NewApiKey = components['schemas']['NewApiKey'];
export type PendingDeletion = components['schemas']['PendingDeletion'];
export type AbuseScan = components['schemas']['AbuseScan'];
export type Notices = components['schemas']['Notices'];
export type IdentityProviderDiscovery = components['schemas']['IdentityProviderDiscovery'];
export type EnvVariable = components['schemas']['EnvVariable'];
export type EnvImport = components['schemas']['EnvImport'];
export type UploadSession = components['schemas']['UploadSession'];
export type FinalizedUpload = components['schemas']['FinalizedUpload'];
export type Project = components['schemas']['Project'];
export type DeploymentPage = components['schemas']['DeploymentPage'];
export type Deployment = components['schemas']['Deployment'];
export type DeploymentDetail = components['schemas']['DeploymentDetail'];
export type ServingRulesSummary = components['schemas']['ServingRulesSummary'];
export type ProjectScreenshot = components['schemas']['ProjectScreenshot'];
export type ProjectAnalytics = components['schemas']['ProjectAnalytics'];
export type FunctionsList = components['schemas']['FunctionsList'];
export type FunctionView = components['schemas']['FunctionView'];
export type InvocationSummary = components['schemas']['InvocationSummary'];
export type Invocation = components['schemas']['Invocation'];
export type Domain = components['schemas']['Domain'];
export type DnsRecord = components['schemas']['DnsRecord'];
export type BuildLogPage = components['schemas']['BuildLogPage'];
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
