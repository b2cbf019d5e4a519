cmd_Release/obj.target/tenferro_blas/src/blas_addon.o := g++ -o Release/obj.target/tenferro_blas/src/blas_addon.o ../src/blas_addon.cc '-DNODE_GYP_MODULE_NAME=tenferro_blas' '-DUSING_UV_SHARED=1' '-DUSING_V8_SHARED=1' '-DV8_DEPRECATION_WARNINGS=1' '-D_GLIBCXX_USE_CXX11_ABI=1' '-D_FILE_OFFSET_BITS=64' '-D_LARGEFILE_SOURCE' '-D__STDC_FORMAT_MACROS' '-DOPENSSL_NO_PINSHARED' '-DOPENSSL_THREADS' '-DNAPI_VERSION=8' '-DNAPI_DISABLE_CPP_EXCEPTIONS' '-DNODE_ADDON_API_DISABLE_DEPRECATED' '-D_GNU_SOURCE' '-DBUILDING_NODE_EXTENSION' -I/usr/include/node -I/usr/src -I/usr/deps/openssl/config -I/usr/deps/openssl/openssl/include -I/usr/deps/uv/include -I/usr/deps/zlib -I/usr/deps/v8/include -I../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api -I/usr/include/x86_64-linux-gnu  -fPIC -pthread -Wall -Wextra -Wno-unused-parameter -O2 -Wall -Wextra -m64 -fno-omit-frame-pointer -fno-rtti -fno-exceptions -O2 -std=c++17 -fno-exceptions -Wall -Wextra -MMD -MF ./Release/.deps/Release/obj.target/tenferro_blas/src/blas_addon.o.d.raw   -c
Release/obj.target/tenferro_blas/src/blas_addon.o: ../src/blas_addon.cc \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h \
 /usr/include/node/node_api.h /usr/include/node/js_native_api.h \
 /usr/include/node/js_native_api_types.h \
 /usr/include/node/node_api_types.h \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi-inl.h \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h
../src/blas_addon.cc:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h:
/usr/include/node/node_api.h:
/usr/include/node/js_native_api.h:
/usr/include/node/js_native_api_types.h:
/usr/include/node/node_api_types.h:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi-inl.h:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h:
